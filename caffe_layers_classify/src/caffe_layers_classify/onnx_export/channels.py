"""ONNX converters of the pack's channel and shape layers: Axpy, ShuffleChannel, Unsqueeze."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_classify.axpy import AxpyLayer
from caffe_layers_classify.shuffle_channel import ShuffleChannelLayer
from caffe_layers_classify.unsqueeze import UnsqueezeLayer


def convert_axpy(layer: AxpyLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """a * x + y, with a reshaped to (N, C, 1, ...) to broadcast over x's spatial axes."""
    scale, x, y = bottoms
    x_shape = graph.shape(x)
    broadcast = (*x_shape[:2], *(1,) * (len(x_shape) - 2))
    if graph.shape(scale) != broadcast:
        scale = graph.reshape(scale, broadcast)
    graph.op("Add", [graph.op("Mul", [scale, x]), y], tops[0])


def convert_shuffle_channel(layer: ShuffleChannelLayer, graph: OnnxGraph, bottoms: Sequence[str],
                            tops: Sequence[str]) -> None:
    """Reshape to (N, g, C/g, H W), swap the two channel axes, reshape to the (N, C, H, W) top."""
    num, channels, height, width = graph.shape(tops[0])
    grouped = graph.reshape(bottoms[0], (num, layer.group, channels // layer.group, height * width))
    swapped = graph.op("Transpose", [grouped], perm=[0, 2, 1, 3])
    graph.reshape(swapped, (num, channels, height, width), tops[0])


def convert_unsqueeze(layer: UnsqueezeLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """Unsqueeze at the layer's axis (a negative dim counted from the end of the top)."""
    axis = layer.dim + len(graph.shape(bottoms[0])) + 1 if layer.dim < 0 else layer.dim
    graph.op("Unsqueeze", [bottoms[0], graph.ints([axis], "axes")], tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "Axpy": convert_axpy,
    "ShuffleChannel": convert_shuffle_channel,
    "Unsqueeze": convert_unsqueeze,
}
