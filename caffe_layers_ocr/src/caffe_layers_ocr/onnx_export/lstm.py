"""Lstm's converter: one ONNX LSTM (gates reordered from the fork's i, f, o, g to ONNX's i, o, f, c)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_ocr.lstm import LstmLayer


def _onnx_gate_order(matrix: np.ndarray, hidden: int) -> np.ndarray:
    """Rows [i, f, o, g] (the fork's) as [i, o, f, c] (ONNX's)."""
    i, f, o, g = (matrix[k * hidden:(k + 1) * hidden] for k in range(4))
    return np.concatenate([i, o, f, g])


def convert_lstm(layer: LstmLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Zero initial states (the fork's without a clip bottom); Y (T, 1, N, H) reshaped to the top."""
    if len(bottoms) > 1:
        raise OnnxExportError("a clip bottom carries the states from one forward to the next, which an ONNX "
                              "graph cannot hold")
    steps, num = graph.shape(bottoms[0])[:2]
    hidden = layer.hidden
    x = graph.reshape(bottoms[0], [steps, num, layer.input_size])
    weight_i = _onnx_gate_order(layer.blobs[0].cpu_data(), hidden)[None]
    weight_h = _onnx_gate_order(layer.blobs[1].cpu_data(), hidden)[None]
    bias = np.concatenate([_onnx_gate_order(layer.blobs[2].cpu_data(), hidden), np.zeros(4 * hidden)])[None]
    y = graph.node("LSTM", [x, graph.constant(weight_i, "W"), graph.constant(weight_h, "R"),
                            graph.constant(bias, "B")], 1, hidden_size=hidden)[0]
    graph.reshape(y, [steps, num, hidden], tops[0])


CONVERTERS: dict[str, Converter] = {"Lstm": convert_lstm}
