"""ONNX export of the depthwise convolutions: onnxruntime gives the layers' own outputs."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core import onnx_export
from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    input_layer,
    net_from_text,
    newest_opset,
    randomise,
)


def _conv(layer_type, conv, bottoms=("data",), tops=("out",)):
    wires = "".join(f' bottom: "{b}"' for b in bottoms) + "".join(f' top: "{t}"' for t in tops)
    return f'layer {{ name: "conv" type: "{layer_type}"{wires} convolution_param {{ {conv} }} }}'


def _matches(text, opset=None):
    net = net_from_text(text)
    randomise(net, np.random.default_rng(2))
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
])
def test_depthwise_convolution(conv):
    _matches(input_layer("data", (2, 4, 6, 5)) + _conv("DepthwiseConvolution", conv))


@pytest.mark.parametrize("opset", [13, newest_opset()])
def test_depthwise_convolution_1d_and_3d(opset):
    conv_1d = "num_output: 6 group: 3 kernel_size: 3 stride: 2"
    _matches(input_layer("data", (2, 3, 9)) + _conv("DepthwiseConvolution", conv_1d), opset)
    conv_3d = "num_output: 2 group: 2 kernel_size: 3 pad: 1"
    _matches(input_layer("data", (1, 2, 4, 5, 6)) + _conv("DepthwiseConvolution", conv_3d), opset)


def test_depthwise_convolution_axis_and_two_bottoms():
    text = (input_layer("a", (2, 3, 4, 6, 5)) + input_layer("b", (2, 3, 4, 6, 5))
            + _conv("DepthwiseConvolution", "num_output: 4 group: 4 kernel_size: 3 pad: 1 axis: 2",
                    bottoms=("a", "b"), tops=("out_a", "out_b")))
    _matches(text)


@pytest.mark.parametrize("conv", [
    "kernel_size: 3",
    "kernel_size: 3 pad: 1 stride: 2 bias_term: false",
    "kernel_h: 3 kernel_w: 1 pad_h: 1 pad_w: 0 stride_h: 2 stride_w: 1 num_output: 99 group: 7",
    "kernel_size: 3 dilation: 2 pad: 2",
])
def test_convolution_depthwise(conv):
    _matches(input_layer("data", (2, 4, 6, 5)) + _conv("ConvolutionDepthwise", conv))


def test_convolution_depthwise_of_a_two_axis_bottom():
    _matches(input_layer("data", (2, 4)) + _conv("ConvolutionDepthwise", "kernel_size: 1"))


def test_depthwise_convolution_without_spatial_axes_is_refused():
    net = net_from_text(input_layer("data", (2, 4)) + _conv("DepthwiseConvolution", "num_output: 4 group: 4 "
                                                       "kernel_size: 1"))
    with pytest.raises(OnnxExportError, match="no spatial axes"):
        onnx_export.to_model(net)
