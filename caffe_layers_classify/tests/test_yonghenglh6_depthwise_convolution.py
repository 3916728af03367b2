"""DepthwiseConvolution (yonghenglh6): Caffe's convolution_param and checks, forward against a loop
reference (multiplier, strides, pads, dilation, N-D, axis, several bottoms), gradients, refusals."""

import itertools

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker

FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"


def text(conv: str) -> str:
    """A DepthwiseConvolution layer with this convolution_param body and Gaussian fillers."""
    return f'name: "dw" type: "DepthwiseConvolution" convolution_param {{ {conv} {FILLERS} }}'


def reference(x, weight, bias, kernel, stride, pad, dilation):
    """Caffe's grouped convolution with group = channels, written as loops over outputs and taps."""
    num, channels, *spatial = x.shape
    outputs = weight.shape[0]
    multiplier = outputs // channels
    extent = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
    out_shape = [int((i + 2 * p - e) / s) + 1
                 for i, p, e, s in zip(spatial, pad, extent, stride, strict=True)]
    out = np.zeros((num, outputs, *out_shape))
    w = weight.reshape(outputs, -1).astype(np.float64)
    for o in range(outputs):
        source_channel = x[:, o // multiplier].astype(np.float64)
        for position in itertools.product(*(range(n) for n in out_shape)):
            for tap, offsets in enumerate(itertools.product(*(range(k) for k in kernel))):
                source = [q * s - p + t * d for q, s, p, t, d in zip(position, stride, pad, offsets, dilation,
                                                                     strict=True)]
                if all(0 <= i < n for i, n in zip(source, spatial, strict=True)):
                    out[(slice(None), o, *position)] += w[o, tap] * source_channel[(slice(None), *source)]
            if bias is not None:
                out[(slice(None), o, *position)] += bias[o]
    return out


def setup(make_layer, conv, bottoms, phase=caffe_pb2.TRAIN):
    """The layer and its tops after setup on `bottoms`."""
    layer = make_layer(text(conv), phase)
    tops = [Blob() for _ in bottoms]
    layer.setup(bottoms, tops)
    return layer, tops


@pytest.mark.parametrize(("conv", "shape", "geometry"), [
    ("num_output: 3 group: 3 kernel_size: 3 pad: 1", (2, 3, 5, 6), ((3, 3), (1, 1), (1, 1), (1, 1))),
    ("num_output: 4 group: 4 kernel_size: 3 stride: 2", (2, 4, 7, 6), ((3, 3), (2, 2), (0, 0), (1, 1))),
    ("num_output: 2 group: 2 kernel_h: 2 kernel_w: 3 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0",
     (1, 2, 6, 5), ((2, 3), (2, 1), (1, 0), (1, 1))),
    ("num_output: 2 group: 2 kernel_size: [3, 2] stride: [1, 2] pad: [2, 1] dilation: [2, 1]",
     (2, 2, 6, 7), ((3, 2), (1, 2), (2, 1), (2, 1))),
    ("num_output: 6 group: 3 kernel_size: 3 pad: 1 bias_term: false", (2, 3, 4, 4),
     ((3, 3), (1, 1), (1, 1), (1, 1))),
    ("num_output: 4 group: 2 kernel_size: 3 stride: 2 pad: 1", (2, 2, 9), ((3,), (2,), (1,), (1,))),
    ("num_output: 2 group: 2 kernel_size: 2 pad: [1, 0, 1] dilation: 2", (1, 2, 3, 4, 5),
     ((2, 2, 2), (1, 1, 1), (1, 0, 1), (2, 2, 2))),
])
def test_forward(make_layer, gaussian, conv, shape, geometry):
    bottom = gaussian(shape)
    layer, (top,) = setup(make_layer, conv, [bottom])
    weight = layer.blobs[0].cpu_data()
    bias = layer.blobs[1].cpu_data() if len(layer.blobs) > 1 else None
    assert weight.shape == (top.shape[1], 1, *geometry[0])
    layer.forward([bottom], [top])
    expected = reference(bottom.cpu_data(), weight, bias, *geometry)
    assert top.shape == expected.shape
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-4, atol=1e-5)


def test_axis_and_several_bottoms(make_layer, gaussian):
    """axis 2: the leading axes are the batch; each bottom gets its own top from the same filters."""
    bottoms = [gaussian((2, 3, 4, 5, 5), seed=1), gaussian((2, 3, 4, 5, 5), seed=2)]
    layer, tops = setup(make_layer, "num_output: 4 group: 4 kernel_size: 3 stride: 2 axis: 2", bottoms)
    layer.forward(bottoms, tops)
    weight, bias = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    for bottom, top in zip(bottoms, tops, strict=True):
        assert top.shape == (2, 3, 4, 2, 2)
        expected = reference(bottom.cpu_data().reshape(6, 4, 5, 5), weight, bias, (3, 3), (2, 2), (0, 0),
                             (1, 1))
        np.testing.assert_allclose(top.cpu_data().reshape(6, 4, 2, 2), expected, rtol=1e-4, atol=1e-5)


def test_truncating_division_of_the_output_size(make_layer, gaussian):
    """(2 + 0 - 3) / 2 + 1 = 1 in C++ (toward zero), not 0: one window overhanging the input."""
    layer, (top,) = setup(make_layer, "num_output: 1 group: 1 kernel_h: 3 kernel_w: 1 stride: 2",
                          [gaussian((1, 1, 2, 3))])
    assert top.shape == (1, 1, 1, 2)


@pytest.mark.parametrize(("conv", "shape"), [
    ("num_output: 2 group: 2 kernel_size: 3 pad: 1 stride: 2", (1, 2, 4, 5)),
    ("num_output: 4 group: 2 kernel_size: 2 dilation: 2 pad: 1", (1, 2, 3, 3)),
])
def test_gradient(make_layer, gaussian, conv, shape):
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text(conv)), [gaussian(shape)],
                                                          [Blob()])


def test_gradient_of_several_bottoms(make_layer, gaussian):
    bottoms = [gaussian((1, 2, 3, 3), seed=1), gaussian((1, 2, 3, 3), seed=2)]
    GradientChecker(1e-2, 1e-3).check_gradient(make_layer(text("num_output: 2 group: 2 kernel_size: 2")),
                                               bottoms, [Blob(), Blob()])


def test_backward_accumulates_param_diffs_and_overwrites_the_bottom_diff(make_layer, gaussian):
    bottom = gaussian((1, 2, 4, 4))
    layer, (top,) = setup(make_layer, "num_output: 2 group: 2 kernel_size: 3", [bottom])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 0
    bottom.mutable_cpu_diff()[...] = 5
    layer.backward([top], [True], [bottom])
    once = [blob.cpu_diff().copy() for blob in layer.blobs]
    first = bottom.cpu_diff().copy()
    layer.backward([top], [True], [bottom])
    for blob, diff in zip(layer.blobs, once, strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), 2 * diff, rtol=1e-6)
    np.testing.assert_array_equal(bottom.cpu_diff(), first)
    np.testing.assert_allclose(layer.blobs[1].cpu_diff(), [8, 8])


def test_stored_blobs_are_used(make_layer, gaussian):
    param = caffe_pb2.LayerParameter()
    source, _ = setup(make_layer, "num_output: 2 group: 2 kernel_size: 3", [gaussian((1, 2, 4, 4))])
    param.CopyFrom(source.to_proto())
    layer = type(source)(param)
    layer.setup([gaussian((1, 2, 4, 4))], [Blob()])
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), source.blobs[0].cpu_data())


@pytest.mark.parametrize(("conv", "shape", "message"), [
    ("num_output: 3 kernel_size: 3", (1, 3, 5, 5), "convolution_param.group \\(1\\) must equal the input's"),
    ("num_output: 3 group: 3 kernel_size: 3", (1, 6, 5, 5), "convolution_param.group \\(3\\) must equal"),
    ("num_output: 5 group: 2 kernel_size: 3", (1, 2, 5, 5), "num_output \\(5\\) must be a multiple of group"),
    ("group: 2 kernel_size: 3", (1, 2, 5, 5), "num_output must be greater than 0"),
    ("num_output: 2 group: 2 kernel_size: [3, 3, 3]", (1, 2, 5, 5), "kernel_size must be specified once"),
    ("num_output: 2 group: 2", (1, 2, 5, 5), "kernel_size must be specified once"),
    ("num_output: 2 group: 2 kernel_size: 3 kernel_h: 3 kernel_w: 3", (1, 2, 5, 5),
     "either kernel_size or kernel_h/kernel_w"),
    ("num_output: 2 group: 2 kernel_h: 3 kernel_w: 3", (1, 2, 5),
     "kernel_h & kernel_w can only be used for 2D"),
    ("num_output: 2 group: 2 kernel_h: 3", (1, 2, 5, 5), "filter dimensions must be nonzero"),
    ("num_output: 2 group: 2 kernel_size: 3 stride: 0", (1, 2, 5, 5), "stride dimensions must be nonzero"),
    ("num_output: 2 group: 2 kernel_size: 3 stride: 1 stride_h: 1 stride_w: 1", (1, 2, 5, 5),
     "either stride or stride_h/stride_w"),
    ("num_output: 2 group: 2 kernel_size: 3 pad: [1, 1, 1]", (1, 2, 5, 5), "pad must be specified once"),
    ("num_output: 2 group: 2 kernel_size: 3 dilation: [1, 1, 1]", (1, 2, 5, 5),
     "dilation must be specified once"),
    ("num_output: 2 group: 2 kernel_size: 3 axis: 4", (1, 2, 5, 5), "convolution_param.axis"),
    ("num_output: 2 group: 2 kernel_size: 5 stride: 2", (1, 2, 2, 9), "the output shape would be \\[0, 3\\]"),
])
def test_refusals(make_layer, gaussian, conv, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        setup(make_layer, conv, [gaussian(shape)])


def test_refuses_a_stored_weight_of_another_shape(make_layer, gaussian):
    source, _ = setup(make_layer, "num_output: 2 group: 2 kernel_size: 3", [gaussian((1, 2, 4, 4))])
    param = source.to_proto()
    param.convolution_param.kernel_size[0] = 2
    with pytest.raises(LayerSetupError, match="incorrect weight shape: expected shape \\[2, 1, 2, 2\\]"):
        type(source)(param).setup([gaussian((1, 2, 4, 4))], [Blob()])
    param.convolution_param.bias_term = False
    param.convolution_param.kernel_size[0] = 3
    with pytest.raises(LayerSetupError, match="incorrect number of weight blobs: expected 1"):
        type(source)(param).setup([gaussian((1, 2, 4, 4))], [Blob()])


@pytest.mark.parametrize(("shape", "message"), [((1, 3, 4, 4), "expected 2 channels, got 3"),
                                                ((1, 2, 4), "bottom num_axes may not change")])
def test_refuses_a_changed_bottom(make_layer, gaussian, shape, message):
    bottom = gaussian((1, 2, 4, 4))
    layer, tops = setup(make_layer, "num_output: 2 group: 2 kernel_size: 3", [bottom])
    bottom.reshape(shape)
    with pytest.raises(LayerSetupError, match=message):
        layer.reshape([bottom], tops)


def test_refuses_bottoms_of_different_shapes(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="all inputs must have the same shape"):
        setup(make_layer, "num_output: 2 group: 2 kernel_size: 3",
              [gaussian((1, 2, 4, 4)), gaussian((1, 2, 5, 4))])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(3).standard_normal((2, 4, 9, 8))
    gpu_matches_cpu(text("num_output: 8 group: 4 kernel_size: 3 stride: 2 pad: 1 dilation: 2"), [x],
                    rtol=1e-4, atol=1e-5)
