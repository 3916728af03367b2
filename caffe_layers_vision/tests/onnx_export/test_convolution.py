"""ONNX export of Convolution and Deconvolution: onnxruntime's Conv and ConvTranspose give the tops."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    net_from_text,
    newest_opset,
    one_layer_net,
    op_types,
    randomise,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export


def conv_net(layer_type: str, shape: tuple[int, ...], params: str, seed: int = 0):
    """A net of one convolution layer of `layer_type` on an input of `shape`, random weights and input."""
    layer = layer_text(layer_type, f"convolution_param {{ {params} }}", name="conv")
    return one_layer_net(layer, {"data": shape}, seed)


CONVOLUTIONS = [
    ((2, 3, 7, 6), "num_output: 4 kernel_size: 3"),
    ((2, 3, 7, 6), "num_output: 4 kernel_size: 3 pad: 1 bias_term: false"),
    ((2, 4, 9, 8), "num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2"),
    ((2, 4, 9, 9), "num_output: 4 kernel_size: 3 dilation: 2 pad: 2 group: 4"),
    ((1, 3, 8, 11), "num_output: 2 kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 3 pad_h: 1 pad_w: 0"),
    ((2, 3, 8, 7), "num_output: 5 kernel_size: 3 kernel_size: 2 stride: 1 stride: 2 dilation: 1 dilation: 2"),
    ((2, 3, 6, 6), "num_output: 2 kernel_size: 1"),
    ((1, 2, 2, 5), "num_output: 3 kernel_size: 3 stride: 2"),
    ((2, 2, 5, 6, 4), "num_output: 3 kernel_size: 3 stride: 2 pad: 1"),
    ((2, 2, 9), "num_output: 3 kernel_size: 3 stride: 2"),
    ((2, 3, 7, 6), "num_output: 4 kernel_size: 3 axis: -3"),
]


@pytest.mark.parametrize(("shape", "params"), CONVOLUTIONS)
def test_convolution(shape, params):
    model = assert_onnx_matches(conv_net("Convolution", shape, params))
    assert op_types(model) == ["Conv"]


DECONVOLUTIONS = [
    ((2, 3, 4, 5), "num_output: 4 kernel_size: 3"),
    ((2, 3, 4, 5), "num_output: 4 kernel_size: 4 stride: 2 pad: 1 bias_term: false"),
    ((2, 4, 5, 4), "num_output: 6 kernel_size: 3 stride: 2 pad: 1 group: 2"),
    ((2, 4, 5, 5), "num_output: 4 kernel_size: 3 stride: 3 dilation: 2 pad: 2 group: 4"),
    ((1, 3, 4, 6), "num_output: 2 kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 3 pad_h: 1 pad_w: 0"),
    ((2, 3, 5, 4), "num_output: 2 kernel_size: 1 stride: 2"),
    ((2, 2, 3, 4, 3), "num_output: 3 kernel_size: 3 stride: 2 pad: 1"),
]


@pytest.mark.parametrize(("shape", "params"), DECONVOLUTIONS)
def test_deconvolution(shape, params):
    net = conv_net("Deconvolution", shape, params)
    model = assert_onnx_matches(net)
    assert op_types(model) == ["ConvTranspose"]
    params = net.layers[1].params
    expected = tuple(s * (i - 1) + d * (k - 1) + 1 - 2 * p for i, s, d, k, p in zip(
        shape[2:], params.stride, params.dilation, params.kernel, params.pad, strict=True))
    assert net.blob_by_name("out").shape[2:] == expected


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
@pytest.mark.parametrize("layer_type", ["Convolution", "Deconvolution"])
def test_opsets(layer_type, opset):
    net = conv_net(layer_type, (2, 4, 6, 5), "num_output: 4 kernel_size: 3 stride: 2 pad: 1 group: 2")
    assert_onnx_matches(net, opset)


def test_two_bottoms_share_the_weights():
    net = net_from_text("""
    layer { name: "data" type: "Input" top: "a" top: "b"
            input_param { shape { dim: 2 dim: 3 dim: 5 dim: 5 } shape { dim: 2 dim: 3 dim: 5 dim: 5 } } }
    layer { name: "conv" type: "Convolution" bottom: "a" bottom: "b" top: "ya" top: "yb"
            convolution_param { num_output: 2 kernel_size: 3 } }
    """)
    randomise(net, np.random.default_rng(1))
    model = assert_onnx_matches(net)
    assert len(model.graph.initializer) == 2


def test_channel_axis_other_than_one_is_refused():
    net = conv_net("Convolution", (3, 5, 6), "num_output: 2 kernel_size: 3 axis: 0")
    with pytest.raises(OnnxExportError, match="channels on axis 1"):
        onnx_export.to_model(net)


def test_input_without_spatial_axes_is_refused():
    """Caffe convolves (N, C) with no spatial axes as a linear map; ONNX's Conv needs at least one."""
    net = conv_net("Convolution", (3, 5), "num_output: 2")
    with pytest.raises(OnnxExportError, match=r"(^|: )the input has no spatial axes after the channel axis$"):
        onnx_export.to_model(net)
