"""ONNX converter of LRN: ONNX's LRN across channels, AveragePool and Pow within each channel."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.lrn import LRNLayer


def convert_lrn(layer: LRNLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """ACROSS_CHANNELS: LRN(size, alpha, beta, bias=k); WITHIN_CHANNEL: x (1 + alpha avg(x^2))^-beta."""
    x = bottoms[0]
    if layer.region == caffe_pb2.LRNParameter.ACROSS_CHANNELS:
        graph.op("LRN", [x], tops[0], size=layer.size, alpha=layer.alpha, beta=layer.beta, bias=layer.k)
        return
    # Caffe's WITHIN_CHANNEL averages over size x size windows padded with zeros that count in the divisor.
    pad = (layer.size - 1) // 2
    average = graph.op("AveragePool", [graph.op("Mul", [x, x])], kernel_shape=[layer.size] * 2,
                       pads=[pad] * 4, strides=[1, 1], count_include_pad=1)
    scaled = graph.op("Mul", [average, graph.constant(np.float32(layer.alpha), "alpha")])
    scale = graph.op("Add", [scaled, graph.constant(np.float32(1.0), "one")])
    power = graph.op("Pow", [scale, graph.constant(np.float32(-layer.beta), "minus_beta")])
    graph.op("Mul", [x, power], tops[0])


CONVERTERS = {"LRN": convert_lrn}
