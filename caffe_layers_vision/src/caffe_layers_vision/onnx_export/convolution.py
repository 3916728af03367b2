"""ONNX converters of Convolution (Conv) and Deconvolution (ConvTranspose)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_vision.base_convolution import BaseConvolutionLayer


def _weights(layer: BaseConvolutionLayer, graph: OnnxGraph) -> list[str]:
    """The weight initializer, then the bias one if the layer has a bias term."""
    names = [graph.constant(layer.blobs[0].cpu_data(), "weight")]
    if layer.bias_term:
        names.append(graph.constant(layer.blobs[1].cpu_data(), "bias"))
    return names


def _check_axis(layer: BaseConvolutionLayer) -> None:
    """ONNX convolutions take (N, C, *spatial): Caffe's channel axis must be axis 1."""
    if layer.channel_axis != 1:
        raise OnnxExportError(f"convolution_param.axis makes axis {layer.channel_axis} the channel axis; "
                              "ONNX convolutions need the channels on axis 1 (after one batch axis)")
    if not layer.params.kernel:
        raise OnnxExportError("the input has no spatial axes after the channel axis")


def convert_convolution(layer: BaseConvolutionLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """Conv with Caffe's kernel, stride, dilation, group and pad, one node per bottom/top pair."""
    _check_axis(layer)
    params = layer.params
    # Caffe truncates (in + 2 pad - extent) / stride toward zero, so a kernel overhanging the padded input by
    # less than the stride still gives one window: pad the end far enough for ONNX's floor to agree.
    end = [max(p, (o - 1) * s + e - i - p) for i, o, s, e, p in zip(
        layer.bottom_spatial, layer.top_spatial, params.stride, params.extent, params.pad, strict=True)]
    weights = _weights(layer, graph)
    for bottom, top in zip(bottoms, tops, strict=True):
        graph.op("Conv", [bottom, *weights], top, kernel_shape=list(params.kernel),
                 strides=list(params.stride), pads=[*params.pad, *end], dilations=list(params.dilation),
                 group=layer.group)


def convert_deconvolution(layer: BaseConvolutionLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """ConvTranspose: out = stride (in - 1) + dilated kernel - 2 pad, as Caffe's, with symmetric pads."""
    _check_axis(layer)
    params = layer.params
    weights = _weights(layer, graph)
    for bottom, top in zip(bottoms, tops, strict=True):
        graph.op("ConvTranspose", [bottom, *weights], top, kernel_shape=list(params.kernel),
                 strides=list(params.stride), pads=[*params.pad, *params.pad],
                 dilations=list(params.dilation), group=layer.group)


CONVERTERS = {"Convolution": convert_convolution, "Deconvolution": convert_deconvolution}
