"""ONNX converter of SPP: each level's pooling, flattened per image, concatenated."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_vision.onnx_export.pooling import pool
from caffe_layers_vision.spp import SPPLayer


def convert_spp(layer: SPPLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """One pooling per level with the geometry SPP gave its level layers; one level is the pooled blob."""
    if layer.pyramid_height == 1:
        pool(layer.levels[0][0], graph, bottoms[0], tops[0])
        return
    flattened: list[str] = []
    for level, pooled in layer.levels:
        output = graph.fresh(f"level{len(flattened)}")
        pool(level, graph, bottoms[0], output)
        flattened.append(graph.reshape(output, [pooled.shape[0], pooled.count // pooled.shape[0]]))
    graph.op("Concat", flattened, tops[0], axis=1)


CONVERTERS = {"SPP": convert_spp}
