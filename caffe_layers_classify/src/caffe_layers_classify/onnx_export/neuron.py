"""ONNX converters of the pack's element-wise activations: ReLU6, HardSwish, HardSigmoid."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_classify.hard_sigmoid import HardSigmoidLayer
from caffe_layers_classify.hard_swish import HardSwishLayer
from caffe_layers_classify.relu6 import ReLU6Layer

HARD_SWISH_SINCE = 14


def convert_relu6(layer: ReLU6Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Clip(x, 0, threshold); with a negative_slope (or a threshold below 0), LeakyRelu then Min."""
    threshold = np.float32(layer.threshold)
    if layer.negative_slope == 0 and threshold >= 0:
        bounds = [graph.constant(np.float32(0), "min"), graph.constant(threshold, "max")]
        graph.op("Clip", [bottoms[0], *bounds], tops[0])
        return
    if layer.negative_slope == 0:
        leaky = graph.op("Relu", bottoms)
    else:
        leaky = graph.op("LeakyRelu", bottoms, alpha=float(layer.negative_slope))
    graph.op("Min", [leaky, graph.constant(threshold, "threshold")], tops[0])


def convert_hard_swish(layer: HardSwishLayer, graph: OnnxGraph, bottoms: Sequence[str],
                       tops: Sequence[str]) -> None:
    """HardSwish (opset 14 on), else x * HardSigmoid(x; alpha 1/6, beta 1/2)."""
    if graph.opset >= HARD_SWISH_SINCE:
        graph.op("HardSwish", bottoms, tops[0])
        return
    gate = graph.op("HardSigmoid", bottoms, alpha=1.0 / 6.0, beta=0.5)
    graph.op("Mul", [bottoms[0], gate], tops[0])


def convert_hard_sigmoid(layer: HardSigmoidLayer, graph: OnnxGraph, bottoms: Sequence[str],
                         tops: Sequence[str]) -> None:
    """HardSigmoid with the layer's alpha and beta (the fork's formula is ONNX's)."""
    graph.op("HardSigmoid", bottoms, tops[0], alpha=float(layer.alpha), beta=float(layer.beta))


CONVERTERS: dict[str, Callable[..., None]] = {
    "ReLU6": convert_relu6,
    "HardSwish": convert_hard_swish,
    "HardSigmoid": convert_hard_sigmoid,
}
