"""ONNX export of the depthwise convolutions: onnxruntime gives the layers' own outputs."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export


def _conv(layer_type, conv, bottoms=("data",), tops=("out",)):
    return layer_text(layer_type, f"convolution_param {{ {conv} }}", bottoms, tops, "conv")


def _matches(layer, inputs, opset=None):
    net = one_layer_net(layer, inputs, 2)
    model = assert_onnx_matches(net, opset=opset)
    convs = [node for node in model.graph.node if node.op_type == "Conv"]
    assert convs and all(next(a.i for a in node.attribute if a.name == "group") == net.layers[-1].channels
                         for node in convs)
    return model


@pytest.mark.parametrize("conv", [
    "num_output: 4 group: 4 kernel_size: 3",
    "num_output: 4 group: 4 kernel_size: 3 pad: 1 stride: 2 bias_term: false",
    "num_output: 12 group: 4 kernel_h: 3 kernel_w: 2 pad_h: 1 pad_w: 0 stride_h: 1 stride_w: 2",
    "num_output: 8 group: 4 kernel_size: 3 dilation: 2 pad: 2",
    # Smaller than the dilated kernel: Caffe's truncating division still gives one output.
    "num_output: 4 group: 4 kernel_size: 7 stride: 3",
    # group unset: depthwise all the same, so the Conv's group is the channels, not 1.
    "num_output: 4 kernel_size: 3 pad: 1",
    "num_output: 8 kernel_size: 3 stride: 2",
])
def test_depthwise_convolution(conv):
    _matches(_conv("DepthwiseConvolution", conv), {"data": (2, 4, 6, 5)})


@pytest.mark.parametrize("opset", [13, newest_opset()])
def test_depthwise_convolution_1d_and_3d(opset):
    conv_1d = "num_output: 6 group: 3 kernel_size: 3 stride: 2"
    _matches(_conv("DepthwiseConvolution", conv_1d), {"data": (2, 3, 9)}, opset)
    conv_3d = "num_output: 2 group: 2 kernel_size: 3 pad: 1"
    _matches(_conv("DepthwiseConvolution", conv_3d), {"data": (1, 2, 4, 5, 6)}, opset)


def test_depthwise_convolution_axis_and_two_bottoms():
    layer = _conv("DepthwiseConvolution", "num_output: 4 group: 4 kernel_size: 3 pad: 1 axis: 2",
                  bottoms=("a", "b"), tops=("out_a", "out_b"))
    _matches(layer, {"a": (2, 3, 4, 6, 5), "b": (2, 3, 4, 6, 5)})


@pytest.mark.parametrize("conv", [
    "kernel_size: 3",
    "kernel_size: 3 pad: 1 stride: 2 bias_term: false",
    "kernel_h: 3 kernel_w: 1 pad_h: 1 pad_w: 0 stride_h: 2 stride_w: 1 num_output: 99 group: 7",
    "kernel_size: 3 dilation: 2 pad: 2",
])
def test_convolution_depthwise(conv):
    _matches(_conv("ConvolutionDepthwise", conv), {"data": (2, 4, 6, 5)})


def test_convolution_depthwise_of_a_two_axis_bottom():
    _matches(_conv("ConvolutionDepthwise", "kernel_size: 1"), {"data": (2, 4)})


def test_depthwise_convolution_without_spatial_axes_is_refused():
    layer = _conv("DepthwiseConvolution", "num_output: 4 group: 4 kernel_size: 1")
    net = one_layer_net(layer, {"data": (2, 4)})
    with pytest.raises(OnnxExportError, match="no spatial axes"):
        onnx_export.to_model(net)
