"""Region's converter: each anchor's entries sliced, Sigmoid on x, y and objectness (and on the classes
without softmax), Softmax over the classes, concatenated back."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_yolo.region import RegionLayer

ENTRIES = 2  # the axis of (N, num, entries, H * W) that holds one anchor's entries


def _entries(graph: OnnxGraph, x: str, start: int, end: int) -> str:
    """Entries [start, end) of every anchor."""
    return graph.op("Slice", [x, graph.ints([start]), graph.ints([end]), graph.ints([ENTRIES])])


def convert_region(layer: RegionLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """The bottom viewed as (N, num, coords + 1 + classes, H * W), activated per entry and viewed back."""
    n, _, h, w = graph.shape(bottoms[0])
    c, entries = layer.coords, layer.coords + 1 + layer.classes
    x = graph.reshape(bottoms[0], [n, layer.num, entries, h * w])
    parts = [graph.op("Sigmoid", [_entries(graph, x, 0, 2)])]
    if c > 2:
        parts.append(_entries(graph, x, 2, c))
    parts.append(graph.op("Sigmoid", [_entries(graph, x, c, c + 1)]))
    classes = _entries(graph, x, c + 1, entries)
    if layer.softmax:
        parts.append(graph.op("Softmax", [classes], axis=ENTRIES))
    else:
        parts.append(graph.op("Sigmoid", [classes]))
    joined = graph.op("Concat", parts, axis=ENTRIES)
    graph.reshape(joined, [n, layer.num * entries, h, w], tops[0])


CONVERTERS: dict[str, Converter] = {"Region": convert_region}
