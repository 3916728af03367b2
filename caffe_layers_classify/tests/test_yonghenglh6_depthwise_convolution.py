"""DepthwiseConvolution (yonghenglh6): Caffe's convolution_param and checks, forward against a loop
reference (multiplier, strides, pads, dilation, N-D, axis, several bottoms), gradients, refusals."""

import itertools

import numpy as np
import pytest

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError, ModelFileError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_layers_classify.yonghenglh6_depthwise_convolution import dense_weight_message

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
    ("num_output: 3 group: 1 kernel_size: 3", (1, 3, 5, 5), "group \\(1\\) must equal the input's"),
    ("num_output: 4 kernel_size: 3", (1, 3, 5, 5), "num_output \\(4\\) must be a multiple of the input's"),
    ("num_output: 3 group: 3 kernel_size: 3", (1, 6, 5, 5), "convolution_param.group \\(3\\) must equal"),
    ("num_output: 5 group: 2 kernel_size: 3", (1, 2, 5, 5), "num_output \\(5\\) must be .* \\(2\\)"),
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
def test_golden_depth_multiplier_two(golden_case):
    # Computed with the fork's CPU path as eric612/MobileNet-YOLO ships it: forward and every diff.
    assert check_layer_case(golden_case("depthwise_conv_group_channels")) == []


def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(3).standard_normal((2, 4, 9, 8))
    gpu_matches_cpu(text("num_output: 8 group: 4 kernel_size: 3 stride: 2 pad: 1 dilation: 2"), [x],
                    rtol=1e-4, atol=1e-5)


# ----- group left unset: depthwise with per-channel weights (as ncnn, OpenCV, MNN and the fork's GPU) -----

UNSET_NET = """
name: 'n'
layer {{ name: 'in' type: 'Input' top: 'x' input_param {{ shape {{ dim: 1 dim: 2 dim: 3 dim: 3 }} }} }}
layer {{ name: 'dw' type: 'DepthwiseConvolution' bottom: 'x' top: 'y'
        convolution_param {{ num_output: {outputs} kernel_size: 2 {extra} }} }}
"""


def unset_net(outputs: int = 2, extra: str = "") -> Net:
    """Input (1, 2, 3, 3) into a DepthwiseConvolution 'dw' with group unset, kernel 2."""
    text = UNSET_NET.format(outputs=outputs, extra=extra)
    return Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)


def stored_dw(shape, values, bias=None) -> caffe_pb2.LayerParameter:
    """A stored layer 'dw' with one weight blob of `shape` holding `values` (and a bias blob)."""
    layer = caffe_pb2.LayerParameter(name="dw", type="DepthwiseConvolution")
    for blob_shape, data in ((shape, values), ((shape[0],), bias)):
        if data is None:
            continue
        blob = layer.blobs.add()
        blob.shape.dim.extend(blob_shape)
        blob.data.extend(np.asarray(data, dtype=np.float32).ravel().tolist())
    return layer


def caffemodel(tmp_path, layer: caffe_pb2.LayerParameter):
    """A .caffemodel file holding one stored layer."""
    path = tmp_path / "stored.caffemodel"
    path.write_bytes(caffe_pb2.NetParameter(name="n", layer=[layer]).SerializeToString())
    return path


@pytest.mark.parametrize(("outputs", "shape", "conv"), [
    (3, (2, 3, 5, 6), "kernel_size: 3 pad: 1"),
    (8, (2, 4, 7, 6), "kernel_size: 3 stride: 2 pad: 1 dilation: 2"),
    (2, (1, 2, 9), "kernel_size: 3 stride: 2 bias_term: false"),
])
def test_group_unset_is_the_explicit_group_of_the_channels(make_layer, gaussian, outputs, shape, conv):
    """Same blob shapes and the same numbers as group = channels, from the same weights."""
    bottom = gaussian(shape)
    unset, (top,) = setup(make_layer, f"num_output: {outputs} {conv}", [bottom])
    explicit, (expected,) = setup(make_layer, f"num_output: {outputs} group: {shape[1]} {conv}", [bottom])
    assert [b.shape for b in unset.blobs] == [b.shape for b in explicit.blobs]
    assert unset.blobs[0].shape == (outputs, 1, *unset.geometry.kernel)
    for mine, theirs in zip(unset.blobs, explicit.blobs, strict=True):
        theirs.mutable_cpu_data()[...] = mine.cpu_data()
    unset.forward([bottom], [top])
    explicit.forward([bottom], [expected])
    np.testing.assert_array_equal(top.cpu_data(), expected.cpu_data())


def test_group_unset_by_hand(make_layer, blob_of):
    """Two channels, 2x2 per-channel kernels, no pad: each output is its own channel's 2x2 window sum."""
    x = np.arange(18, dtype=np.float32).reshape(1, 2, 3, 3)
    bottom = blob_of(x)
    layer, (top,) = setup(make_layer, "num_output: 2 kernel_size: 2", [bottom])
    layer.blobs[0].mutable_cpu_data()[...] = [[[[1, 0], [0, 0]]], [[[1, 1], [1, 1]]]]
    layer.blobs[1].mutable_cpu_data()[...] = [0.5, -1]
    layer.forward([bottom], [top])
    # Channel 0 with tap (0, 0) only: the window's top-left value 0,1,3,4, plus 0.5.
    # Channel 1 with all four taps: 9+10+12+13 = 44, 48, 56, 60, minus 1.
    np.testing.assert_array_equal(top.cpu_data(), [[[[0.5, 1.5], [3.5, 4.5]], [[43, 47], [55, 59]]]])


@pytest.mark.parametrize(("conv", "shape"), [
    ("num_output: 3 kernel_size: 3 pad: 1 stride: 2", (1, 3, 4, 5)),
    ("num_output: 4 kernel_size: 2 dilation: 2 pad: 1", (1, 2, 3, 3)),
])
def test_group_unset_gradient(make_layer, gaussian, conv, shape):
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text(conv)), [gaussian(shape)], [Blob()])


def test_caffemodel_with_per_channel_weights_loads(tmp_path):
    net = unset_net()
    weights = np.array([[[[1, 0], [0, 0]]], [[[1, 1], [1, 1]]]])
    net.copy_trained_layers_from(caffemodel(tmp_path, stored_dw((2, 1, 2, 2), weights, [0.5, -1])))
    net.blob_by_name("x").data[...] = np.arange(18).reshape(1, 2, 3, 3)
    net.forward()
    np.testing.assert_array_equal(net.blob_by_name("y").data,
                                  [[[[0.5, 1.5], [3.5, 4.5]], [[43, 47], [55, 59]]]])


def test_caffemodel_with_a_dense_weight_is_refused_with_what_to_do(tmp_path):
    net = unset_net()
    path = caffemodel(tmp_path, stored_dw((2, 2, 2, 2), np.ones(16), [0, 0]))
    with pytest.raises(ModelFileError) as caught:
        net.copy_trained_layers_from(path)
    message = str(caught.value)
    for part in ("from layer 'dw'", "[2, 2, 2, 2]", "[2, 1, 2, 2]", "group unset", "type to Convolution"):
        assert part in message


def test_dense_weight_message_names_shapes_both_fork_paths_and_the_fixes():
    message = dense_weight_message((8, 4, 3, 3), (8, 1, 3, 3))
    for part in ("[8, 4, 3, 3]", "shape [8, 1, 3, 3]", "on the CPU an ordinary convolution over all 4 input",
                 "W[0] read as shape [4, 1, 3, 3]", "type to Convolution"):
        assert part in message


def test_caffemodel_with_another_shape_gets_the_core_error(tmp_path):
    with pytest.raises(ModelFileError, match="Cannot copy param 0 weights from layer 'dw'; shape mismatch"):
        unset_net().copy_trained_layers_from(caffemodel(tmp_path, stored_dw((2, 1, 3, 3), np.ones(18),
                                                                            [0, 0])))


def test_embedded_dense_weight_is_refused_with_what_to_do(make_layer, gaussian):
    param = proto_io.parse_text(text("num_output: 2 kernel_size: 2"), caffe_pb2.LayerParameter())
    param.MergeFrom(stored_dw((2, 2, 2, 2), np.ones(16), [0, 0]))
    layer = type(make_layer(text("num_output: 2 group: 2 kernel_size: 2")))(param)
    with pytest.raises(LayerSetupError, match=r"layer 'dw'.*\[2, 2, 2, 2\], a dense convolution's"):
        layer.setup([gaussian((1, 2, 3, 3))], [Blob()])


def test_explicit_group_with_a_dense_caffemodel_gets_the_core_error(tmp_path):
    """With group set the fork itself expects (C_out, 1, kh, kw): a dense blob is a plain mismatch."""
    net = unset_net(extra="group: 2")
    with pytest.raises(ModelFileError, match="shape mismatch"):
        net.copy_trained_layers_from(caffemodel(tmp_path, stored_dw((2, 2, 2, 2), np.ones(16), [0, 0])))


def test_group_unset_saves_and_reloads(tmp_path):
    net = unset_net(outputs=4)
    path = tmp_path / "saved.caffemodel"
    net.save(path)
    again = unset_net(outputs=4)
    again.copy_trained_layers_from(path)
    np.testing.assert_array_equal(again.layer_by_name("dw").blobs[0].cpu_data(),
                                  net.layer_by_name("dw").blobs[0].cpu_data())


@pytest.mark.gpu
def test_group_unset_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(4).standard_normal((2, 3, 7, 6))
    gpu_matches_cpu(text("num_output: 6 kernel_size: 3 stride: 2 pad: 1"), [x], rtol=1e-4, atol=1e-5)
