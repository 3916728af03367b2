"""Deconvolution: golden case, Caffe's shape and constant-filler tests, the adjoint of Convolution (2-D,
3-D, grouped), gradients with Caffe's checker parameters and refusals."""

import re

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

GAUSSIAN_FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"


def deconv_text(params: str) -> str:
    """A Deconvolution layer named 'deconv' with this convolution_param text."""
    return f"name: 'deconv' type: 'Deconvolution' convolution_param {{ {params} }}"


def test_golden(golden_case):
    assert check_layer_case(golden_case("deconv")) == []


def test_setup_shapes(make_layer, gaussian):
    bottom = gaussian((2, 3, 6, 4))
    layer, top = make_layer(deconv_text("num_output: 4 kernel_size: 3 stride: 2")), Blob()
    layer.setup([bottom], [top])
    assert top.shape == (2, 4, 13, 9)
    assert layer.blobs[0].shape == (3, 4, 3, 3) and layer.blobs[1].shape == (4,)
    grouped, top = make_layer(deconv_text("num_output: 3 kernel_size: 3 stride: 2 group: 3")), Blob()
    grouped.setup([bottom], [top])
    assert top.shape == (2, 3, 13, 9)
    assert grouped.blobs[0].shape == (3, 1, 3, 3)


def test_constant_filler_counts_overlaps(make_layer):
    """Caffe's TestSimpleDeconvolution: weights 1, bias 0.1, input 1: outputs count the windows over them."""
    bottom = Blob((2, 3, 6, 4))
    bottom.mutable_cpu_data()[...] = 1
    layer = make_layer(deconv_text("num_output: 4 kernel_size: 3 stride: 2 "
                                   "weight_filler { type: 'constant' value: 1 } "
                                   "bias_filler { type: 'constant' value: 0.1 }"))
    top = Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    out = top.cpu_data()
    for h in range(out.shape[2]):
        for w in range(out.shape[3]):
            h_windows = 2 if h % 2 == 0 and 0 < h < out.shape[2] - 1 else 1
            w_windows = 2 if w % 2 == 0 and 0 < w < out.shape[3] - 1 else 1
            expected = 3 * h_windows * w_windows + 0.1
            np.testing.assert_allclose(out[:, :, h, w], expected, rtol=1e-5)


@pytest.mark.parametrize(("shape", "params"), [
    ((2, 3, 4, 3), "num_output: 2 kernel_size: 4 pad: 1 stride: 2"),
    ((2, 4, 3, 5), "num_output: 6 kernel_size: 3 stride: 2 group: 2"),
    ((2, 4, 3, 4), "num_output: 4 kernel_size: 3 pad: 1 group: 4 dilation: 2"),
    ((1, 3, 3, 2, 4), "num_output: 2 kernel_size: 2 stride: 2"),
    ((2, 3, 4, 3), "num_output: 5 kernel_size: 1"),
])
def test_is_the_adjoint_of_convolution(make_layer, gaussian, shape, params):
    """<deconv(x), y> = <x, conv(y)> when both share the weights and have no bias."""
    x = gaussian(shape, seed=3)
    deconv, y_shape = make_layer(deconv_text(f"{params} bias_term: false {GAUSSIAN_FILLERS}")), Blob()
    deconv.setup([x], [y_shape])
    deconv.forward([x], [y_shape])
    y = gaussian(y_shape.shape, seed=4)
    conv_params = re.sub(r"num_output: \d+", f"num_output: {shape[1]}", params)
    conv = make_layer(f"name: 'conv' type: 'Convolution' "
                      f"convolution_param {{ {conv_params} bias_term: false }}")
    conv_top = Blob()
    conv.blobs = [Blob(deconv.blobs[0].shape)]
    conv.blobs[0].mutable_cpu_data()[...] = deconv.blobs[0].cpu_data()
    conv.setup([y], [conv_top])
    conv.forward([y], [conv_top])
    left = float(np.vdot(y_shape.cpu_data().astype(np.float64), y.cpu_data()))
    right = float(np.vdot(x.cpu_data().astype(np.float64), conv_top.cpu_data()))
    assert left == pytest.approx(right, rel=1e-4)


@pytest.mark.parametrize(("shape", "params"), [
    ((1, 3, 2, 2), "num_output: 2 kernel_size: 3 stride: 2"),
    ((2, 4, 2, 2), "num_output: 2 kernel_size: 2 stride: 2 pad: 1 group: 2"),
    ((1, 2, 2, 1, 2), "num_output: 2 kernel_size: 2 stride: 2"),
])
def test_gradient(make_layer, gaussian, shape, params):
    layer = make_layer(deconv_text(f"{params} {GAUSSIAN_FILLERS}"))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian(shape)], [Blob()])


@pytest.mark.parametrize(("params", "message"), [
    ("num_output: 4 kernel_size: 2 pad: 3", "larger than the padded input"),
    ("num_output: 4 kernel_size: 3 group: 2", "channels are not divisible by group 2"),
    ("num_output: 4 kernel_size: 3 group: 3", "num_output 4 is not a multiple of group 3"),
])
def test_refuses_bad_configuration(make_layer, gaussian, params, message):
    layer = make_layer(deconv_text(params))
    with pytest.raises(LayerSetupError, match=message) as info:
        layer.setup([gaussian((2, 3, 2, 2))], [Blob()])
    assert "layer 'deconv' (type Deconvolution)" in str(info.value)
