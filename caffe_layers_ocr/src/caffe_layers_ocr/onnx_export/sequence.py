"""Converters of the sequence-shaping layers: Transpose, Reverse and ContinuationIndicator."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_ocr.continuation_indicator import ContinuationIndicatorLayer
from caffe_layers_ocr.reverse import ReverseLayer
from caffe_layers_ocr.transpose import TransposeLayer


def convert_transpose(layer: TransposeLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """ONNX Transpose with perm = dim."""
    graph.op("Transpose", [bottoms[0]], tops[0], perm=list(layer.dims))


def convert_reverse(layer: ReverseLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """A Slice with step -1 over the whole axis."""
    graph.op("Slice", [bottoms[0], graph.ints([-1], "starts"), graph.ints([np.iinfo(np.int64).min], "ends"),
                       graph.ints([layer.axis], "axes"), graph.ints([-1], "steps")], tops[0])


def convert_continuation_indicator(layer: ContinuationIndicatorLayer, graph: OnnxGraph,
                                   bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """The markers depend on the shapes only: a constant (time_step, N) of 0 then 1s."""
    markers = np.ones(graph.shape(tops[0]), dtype=np.float32)
    markers[0] = 0
    graph.op("Identity", [graph.constant(markers, "continuation")], tops[0])


CONVERTERS: dict[str, Converter] = {
    "Transpose": convert_transpose,
    "Reverse": convert_reverse,
    "ContinuationIndicator": convert_continuation_indicator,
}
