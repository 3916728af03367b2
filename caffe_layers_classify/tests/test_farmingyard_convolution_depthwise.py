"""ConvolutionDepthwise (farmingyard): forward against the fork's loops, its parameter precedence (num_output
and group ignored, kernel_h/w over kernel_size, one or two values per list), gradients, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"


def text(conv: str) -> str:
    """A ConvolutionDepthwise layer with this convolution_param body and Gaussian fillers."""
    return f'name: "dw" type: "ConvolutionDepthwise" convolution_param {{ {conv} {FILLERS} }}'


def reference(x, weight, bias, kernel, stride, pad, dilation):
    """The fork's Forward_cpu loops (over n and c at once): taps in row-major order, then + bias."""
    num, channels, height, width = x.shape
    out_h = (height + 2 * pad[0] - (dilation[0] * (kernel[0] - 1) + 1)) // stride[0] + 1
    out_w = (width + 2 * pad[1] - (dilation[1] * (kernel[1] - 1) + 1)) // stride[1] + 1
    out = np.zeros((num, channels, out_h, out_w), np.float32)
    w = weight.reshape(channels, kernel[0], kernel[1])
    for h in range(out_h):
        for v in range(out_w):
            for kh in range(kernel[0]):
                for kw in range(kernel[1]):
                    h_in = -pad[0] + h * stride[0] + kh * dilation[0]
                    w_in = -pad[1] + v * stride[1] + kw * dilation[1]
                    if 0 <= h_in < height and 0 <= w_in < width:
                        out[:, :, h, v] += w[:, kh, kw] * x[:, :, h_in, w_in]
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


def setup(make_layer, conv, bottom):
    """The layer and its top after setup on `bottom`."""
    layer, top = make_layer(text(conv)), Blob()
    layer.setup([bottom], [top])
    return layer, top


@pytest.mark.parametrize(("conv", "geometry"), [
    ("num_output: 3 kernel_size: 3 pad: 1 stride: 1", ((3, 3), (1, 1), (1, 1), (1, 1))),
    ("num_output: 3 kernel_size: 3 pad: 1 stride: 2 bias_term: false", ((3, 3), (2, 2), (1, 1), (1, 1))),
    ("kernel_size: [2, 3] stride: [2, 1] pad: [0, 2]", ((2, 3), (2, 1), (0, 2), (1, 1))),
    ("kernel_h: 3 kernel_w: 2 stride_h: 1 stride_w: 3 pad_h: 2 pad_w: 1", ((3, 2), (1, 3), (2, 1), (1, 1))),
    ("kernel_size: 3 pad: 2 stride: 1 dilation: 2", ((3, 3), (1, 1), (2, 2), (2, 2))),
    ("kernel_size: 3 pad: 1 stride: 1 dilation: [1, 2]", ((3, 3), (1, 1), (1, 1), (1, 2))),
    ("kernel_size: 5 kernel_h: 1 kernel_w: 3 pad: 1 stride: 1", ((1, 3), (1, 1), (1, 1), (1, 1))),
    ("kernel_size: 3 pad: [1, 0, 7] stride: [2, 1, 9]", ((3, 3), (2, 1), (1, 0), (1, 1))),
    ("kernel_size: 3 pad: 1 stride: 2 stride_h: 1", ((3, 3), (2, 2), (1, 1), (1, 1))),
    ("kernel_size: 3", ((3, 3), (1, 1), (0, 0), (1, 1))),
])
def test_forward(make_layer, gaussian, conv, geometry):
    bottom = gaussian((2, 3, 7, 6))
    layer, top = setup(make_layer, conv, bottom)
    weight = layer.blobs[0].cpu_data()
    bias = layer.blobs[1].cpu_data() if len(layer.blobs) > 1 else None
    assert weight.shape == (3, 1, *geometry[0])
    assert len(layer.blobs) == (1 if "bias_term: false" in conv else 2)
    layer.forward([bottom], [top])
    expected = reference(bottom.cpu_data(), weight, bias, *geometry)
    assert top.shape == expected.shape
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("conv", ["num_output: 7 kernel_size: 3", "num_output: 6 group: 2 kernel_size: 3",
                                  "kernel_size: 3"])
def test_num_output_and_group_are_ignored(make_layer, gaussian, conv):
    layer, top = setup(make_layer, conv, gaussian((2, 4, 5, 5)))
    assert top.shape == (2, 4, 3, 3)
    assert layer.blobs[0].shape == (4, 1, 3, 3) and layer.blobs[1].shape == (4,)


def test_legacy_shapes_of_a_2d_bottom(make_layer, gaussian):
    """A (num, channels) bottom is (num, channels, 1, 1) to the fork's legacy accessors."""
    bottom = gaussian((2, 3))
    layer, top = setup(make_layer, "kernel_size: 1", bottom)
    layer.forward([bottom], [top])
    assert top.shape == (2, 3, 1, 1)
    expected = bottom.cpu_data() * layer.blobs[0].cpu_data().reshape(1, 3) + layer.blobs[1].cpu_data()
    np.testing.assert_allclose(top.cpu_data().reshape(2, 3), expected, rtol=1e-6)


@pytest.mark.parametrize(("conv", "shape"), [("kernel_size: 3 pad: 1 stride: 2", (1, 2, 4, 5)),
                                             ("kernel_size: 2 pad: 1 stride: 1 dilation: 2", (2, 2, 3, 3))])
def test_gradient(make_layer, gaussian, conv, shape):
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text(conv)), [gaussian(shape)], [Blob()])


def test_param_propagate_down_off(make_layer, gaussian):
    bottom = gaussian((1, 2, 4, 4))
    layer, top = setup(make_layer, "kernel_size: 3 pad: 1", bottom)
    layer.forward([bottom], [top])
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 3
    layer.set_param_propagate_down(0, False)
    layer.set_param_propagate_down(1, False)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    assert all((blob.cpu_diff() == 3).all() for blob in layer.blobs)
    assert np.abs(bottom.cpu_diff()).sum() > 0


@pytest.mark.parametrize(("conv", "shape", "message"), [
    ("num_output: 2 pad: 1", (1, 2, 5, 5), "kernel_size \\(or both kernel_h and kernel_w\\) must be set"),
    ("kernel_h: 3 pad: 1", (1, 2, 5, 5), "kernel_size \\(or both kernel_h and kernel_w\\) must be set"),
    ("kernel_size: 0", (1, 2, 5, 5), "the kernel must be nonzero"),
    ("kernel_size: 3 stride: 0", (1, 2, 5, 5), "the stride must be nonzero"),
    ("kernel_size: 3", (1, 2, 5, 5, 1), "at most 4 axes"),
    ("kernel_size: 5 stride: 2", (1, 2, 4, 9), "larger than the padded input"),
])
def test_refusals(make_layer, gaussian, conv, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        setup(make_layer, conv, gaussian(shape))


def test_refuses_a_bottom_with_other_channels(make_layer, gaussian):
    bottom = gaussian((1, 2, 4, 4))
    layer, top = setup(make_layer, "kernel_size: 3", bottom)
    bottom.reshape((1, 3, 4, 4))
    with pytest.raises(LayerSetupError, match="the bottom has 3 channels; the layer was set up for 2"):
        layer.reshape([bottom], [top])


def test_refuses_stored_blobs_of_another_shape(make_layer, gaussian):
    layer, _ = setup(make_layer, "kernel_size: 3", gaussian((1, 2, 4, 4)))
    param = layer.to_proto()
    with pytest.raises(LayerSetupError, match="incorrect weight shape: expected shape \\[3, 1, 3, 3\\]"):
        type(layer)(param).setup([gaussian((1, 3, 4, 4))], [Blob()])
    param.convolution_param.bias_term = False
    with pytest.raises(LayerSetupError, match="weight blobs: expected 1 \\(bias_term false\\)"):
        type(layer)(param).setup([gaussian((1, 2, 4, 4))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(3).standard_normal((2, 4, 9, 8))
    gpu_matches_cpu(text("kernel_size: 3 stride: 2 pad: 1 dilation: 2"), [x], rtol=1e-4, atol=1e-5)
