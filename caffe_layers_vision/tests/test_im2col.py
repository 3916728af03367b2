"""Im2col: golden case, Caffe's shape tests, values against a loop reference (padding, stride, dilation,
rectangular kernels, 3-D), gradient (1e-2, 1e-2) and refusals."""

import itertools

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def im2col_text(params: str) -> str:
    """An Im2col layer named 'im2col' with this convolution_param text."""
    return f"name: 'im2col' type: 'Im2col' convolution_param {{ {params} }}"


def reference_im2col(x, kernel, stride, pad, dilation):
    """Caffe's im2col_cpu per image: channel-major rows, then kernel offsets; zero outside the image."""
    num, channels, *spatial = x.shape
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_spatial = [(s + 2 * p - (d * (k - 1) + 1)) // st + 1
                   for s, p, d, k, st in zip(spatial, pad, dilation, kernel, stride, strict=True)]
    rows = []
    for c in range(channels):
        for offset in itertools.product(*(range(k) for k in kernel)):
            index = tuple(slice(o * d, o * d + st * (n - 1) + 1, st)
                          for o, d, st, n in zip(offset, dilation, stride, out_spatial, strict=True))
            rows.append(padded[(slice(None), c, *index)])
    return np.stack(rows, axis=1)


def test_golden(golden_case):
    assert check_layer_case(golden_case("im2col")) == []


def test_setup_shape(make_layer, gaussian):
    layer, top = make_layer(im2col_text("kernel_size: 3 stride: 2")), Blob()
    layer.setup([gaussian((2, 3, 6, 5))], [top])
    assert top.shape == (2, 27, 2, 2)


@pytest.mark.parametrize(("shape", "params", "kernel", "stride", "pad", "dilation"), [
    ((2, 3, 6, 5), "kernel_size: 3 stride: 2 pad: 1", (3, 3), (2, 2), (1, 1), (1, 1)),
    ((2, 3, 6, 5), "kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 0 pad_w: 1",
     (3, 2), (2, 1), (0, 1), (1, 1)),
    ((2, 3, 7, 6), "kernel_size: 3 dilation: 2", (3, 3), (1, 1), (0, 0), (2, 2)),
    ((1, 2, 4, 5, 3), "kernel_size: 2 stride: 1 stride: 2 stride: 1",
     (2, 2, 2), (1, 2, 1), (0, 0, 0), (1, 1, 1)),
    ((2, 2, 2, 5), "kernel_size: 3 stride: 2", (3, 3), (2, 2), (0, 0), (1, 1)),
])
def test_forward_against_reference(make_layer, gaussian, shape, params, kernel, stride, pad, dilation):
    bottom, top = gaussian(shape), Blob()
    layer = make_layer(im2col_text(params))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    # A kernel overhanging the padded input by less than the stride reads zeros past it, as Caffe's im2col.
    widened = layer.params.padded_shape(shape[2:], top.shape[2:])
    far = [(0, w - s - 2 * p) for s, p, w in zip(shape[2:], pad, widened, strict=True)]
    x = np.pad(bottom.cpu_data(), [(0, 0), (0, 0)] + far)
    np.testing.assert_array_equal(top.cpu_data(), reference_im2col(x, kernel, stride, pad, dilation))


@pytest.mark.parametrize("params", ["kernel_size: 3 stride: 2",
                                    "kernel_size: 3 pad: 1 stride: 2 dilation: 2",
                                    "kernel_size: 5 stride: 2"])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(im2col_text(params))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 5, 4))], [Blob()])


@pytest.mark.parametrize(("params", "shape", "message"), [
    ("kernel_size: 7", (2, 3, 6, 5), "larger than the padded input"),
    ("kernel_size: 3 axis: 3", (2, 3, 6, 5), "at least one spatial axis"),
    ("kernel_size: 3 kernel_h: 3 kernel_w: 3", (2, 3, 6, 5), "either kernel_size or kernel_h/kernel_w"),
])
def test_refuses_bad_configuration(make_layer, gaussian, params, shape, message):
    with pytest.raises(LayerSetupError, match=message) as info:
        make_layer(im2col_text(params)).setup([gaussian(shape)], [Blob()])
    assert "layer 'im2col' (type Im2col)" in str(info.value)
