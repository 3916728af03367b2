"""Mish's converter: ONNX's Mish from opset 18, Softplus, Tanh and Mul below it."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_yolo.mish import MishLayer

MISH_OPSET = 18


def convert_mish(layer: MishLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """y = x tanh(softplus(x)); the layer's threshold of 20 changes softplus by under exp(-20) relative."""
    if graph.opset >= MISH_OPSET:
        graph.op("Mish", [bottoms[0]], tops[0])
        return
    tanh = graph.op("Tanh", [graph.op("Softplus", [bottoms[0]])])
    graph.op("Mul", [bottoms[0], tanh], tops[0])


CONVERTERS: dict[str, Converter] = {"Mish": convert_mish}
