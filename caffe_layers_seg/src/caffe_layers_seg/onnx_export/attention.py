"""ONNX converter of PSANet's PointwiseSpatialAttention: the attention buffer as one Gather, then Softmax,
MatMul and the normalisation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_seg.pointwise_spatial_attention import PointwiseSpatialAttentionLayer


def convert_pointwise_spatial_attention(layer: PointwiseSpatialAttentionLayer, graph: OnnxGraph,
                                        bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """The masks, with a zero plane appended, gathered into the (N, HW, HW) buffer through the layer's own
    index (an int32 constant of HW x HW entries); Softmax along the (N, HW, H, W) buffer's axis when
    is_softmax; then x (N, C, HW) @ buffer times the layer's float32 scale."""
    num, channels, height, width = graph.shape(bottoms[0])
    size = height * width
    planes = graph.reshape(bottoms[1], [num, -1])
    zeros = graph.constant(np.zeros((num, size), np.float32), "outside")
    padded = graph.op("Concat", [planes, zeros], axis=1)
    index = graph.constant(layer.host_index, "buffer_index", dtype=np.int32)
    attention = graph.op("Gather", [padded, index], axis=1)
    if layer.is_softmax:
        attention = graph.reshape(attention, [num, size, height, width])
        attention = graph.op("Softmax", [attention], axis=layer.softmax_axis)
        attention = graph.reshape(attention, [num, size, size])
    product = graph.op("MatMul", [graph.reshape(bottoms[0], [num, channels, size]), attention])
    scaled = graph.op("Mul", [product, graph.constant(layer.scale, "scale")])
    graph.reshape(scaled, [num, channels, height, width], tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "PointwiseSpatialAttention": convert_pointwise_spatial_attention,
}
