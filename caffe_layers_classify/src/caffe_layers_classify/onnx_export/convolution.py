"""ONNX converters of the pack's depthwise convolutions: Conv with group = channels."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_classify.farmingyard_convolution_depthwise import ConvolutionDepthwiseLayer
from caffe_layers_classify.yonghenglh6_depthwise_convolution import DepthwiseConvolutionLayer


def _depthwise_conv(layer: DepthwiseConvolutionLayer | ConvolutionDepthwiseLayer, graph: OnnxGraph,
                    bottom: str, top: str, out_channels: int) -> None:
    """Conv (group = C) of the bottom read as (num, C, *in_spatial), reshaped to the top where it must be.

    The weights (C m, 1, *kernel) put output channel c m + j on input channel c, as ONNX's grouping does.
    """
    g = layer.geometry
    view = (layer.num, layer.channels, *layer.in_spatial)
    x = bottom if graph.shape(bottom) == view else graph.reshape(bottom, view)
    inputs = [x, graph.constant(layer.blobs[0].cpu_data(), "weight")]
    if layer.bias_term:
        inputs.append(graph.constant(layer.blobs[1].cpu_data(), "bias"))
    # Caffe sizes the output with C++ division, which truncates toward zero: an input smaller than the
    # dilated kernel still gives one output, read from the zero border. Padding the end reproduces it.
    pad_end = [max(p, (o - 1) * s + e - i - p) for i, o, s, e, p
               in zip(layer.in_spatial, layer.out_spatial, g.stride, g.extent, g.pad, strict=True)]
    attributes = dict(group=layer.channels, kernel_shape=list(g.kernel), strides=list(g.stride),
                      dilations=list(g.dilation), pads=[*g.pad, *pad_end])
    if graph.shape(top) == (layer.num, out_channels, *layer.out_spatial):
        graph.op("Conv", inputs, top, **attributes)
    else:
        graph.reshape(graph.op("Conv", inputs, None, **attributes), graph.shape(top), top)


def convert_depthwise_convolution(layer: DepthwiseConvolutionLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                  tops: Sequence[str]) -> None:
    """DepthwiseConvolution: one Conv per bottom (they share the weights), the axes before `axis` as num."""
    if not layer.spatial_axes:
        raise OnnxExportError("a convolution with no spatial axes has no ONNX Conv (it needs at least one "
                              "spatial axis)")
    for bottom, top in zip(bottoms, tops, strict=True):
        _depthwise_conv(layer, graph, bottom, top, layer.num_output)


def convert_convolution_depthwise(layer: ConvolutionDepthwiseLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                  tops: Sequence[str]) -> None:
    """ConvolutionDepthwise: a 2-D Conv of the bottom read as (num, channels, height, width)."""
    _depthwise_conv(layer, graph, bottoms[0], tops[0], layer.channels)


CONVERTERS: dict[str, Callable[..., None]] = {
    "DepthwiseConvolution": convert_depthwise_convolution,
    "ConvolutionDepthwise": convert_convolution_depthwise,
}
