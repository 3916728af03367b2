"""Reorg's converter: darknet's index map is a Reshape, a Transpose and a Reshape."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_yolo.reorg import ReorgLayer


def convert_reorg(layer: ReorgLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """The bottom's buffer split into (N, C/s^2, H, s, W, s) blocks and transposed as the layer moves them."""
    n, c, h, w = graph.shape(bottoms[0])
    s = layer.stride
    if layer.reverse:
        split = graph.reshape(bottoms[0], [n, s, s, c // (s * s), h, w])
        moved = graph.op("Transpose", [split], perm=[0, 3, 4, 1, 5, 2])
    else:
        split = graph.reshape(bottoms[0], [n, c // (s * s), h, s, w, s])
        moved = graph.op("Transpose", [split], perm=[0, 3, 5, 1, 2, 4])
    graph.reshape(moved, list(graph.shape(tops[0])), tops[0])


CONVERTERS: dict[str, Converter] = {"Reorg": convert_reorg}
