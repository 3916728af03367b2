"""ONNX converters of the core's own layer types (Input becomes a graph input in the exporter)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.layer import Layer
from caffe_core.onnx_export.graph import OnnxGraph


def convert_split(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Split: one Identity per top."""
    for top in tops:
        graph.identity(bottoms[0], top)
