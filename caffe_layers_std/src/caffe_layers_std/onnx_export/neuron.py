"""ONNX converters of the neuron layers (elementwise, shape-preserving)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph


def convert_relu(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """ReLU, or LeakyRelu with negative_slope."""
    slope = layer.layer_param.relu_param.negative_slope
    if slope == 0:
        graph.op("Relu", bottoms, tops[0])
    else:
        graph.op("LeakyRelu", bottoms, tops[0], alpha=slope)


CONVERTERS = {"ReLU": convert_relu}
