"""ONNX converters of the neuron layers (elementwise, shape-preserving)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from onnx import TensorProto

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2
from caffe_layers_std.neuron.absval import AbsValLayer
from caffe_layers_std.neuron.bnll import BNLLLayer
from caffe_layers_std.neuron.clip import ClipLayer
from caffe_layers_std.neuron.dropout import DropoutLayer
from caffe_layers_std.neuron.elu import ELULayer
from caffe_layers_std.neuron.exp import ExpLayer
from caffe_layers_std.neuron.log import LogLayer
from caffe_layers_std.neuron.power import PowerLayer
from caffe_layers_std.neuron.prelu import PReLULayer
from caffe_layers_std.neuron.relu import ReLULayer
from caffe_layers_std.neuron.sigmoid import SigmoidLayer
from caffe_layers_std.neuron.swish import SwishLayer
from caffe_layers_std.neuron.tanh import TanHLayer
from caffe_layers_std.neuron.threshold import ThresholdLayer


def convert_relu(layer: ReLULayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """ReLU, or LeakyRelu with negative_slope."""
    slope = layer.layer_param.relu_param.negative_slope
    if slope == 0:
        graph.op("Relu", bottoms, tops[0])
    else:
        graph.op("LeakyRelu", bottoms, tops[0], alpha=slope)


def convert_prelu(layer: PReLULayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """PRelu with the slope shaped (C, 1, ...) to broadcast along axis 1, or one shared slope."""
    slope = np.asarray(layer.blobs[0].cpu_data()).reshape(-1)
    if not layer.channel_shared:
        slope = slope.reshape((-1,) + (1,) * (len(graph.shape(bottoms[0])) - 2))
    graph.op("PRelu", [bottoms[0], graph.constant(slope, "slope")], tops[0])


def convert_elu(layer: ELULayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Elu with alpha."""
    graph.op("Elu", bottoms, tops[0], alpha=layer.alpha)


def convert_sigmoid(layer: SigmoidLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Sigmoid."""
    graph.op("Sigmoid", bottoms, tops[0])


def convert_tanh(layer: TanHLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Tanh."""
    graph.op("Tanh", bottoms, tops[0])


def convert_absval(layer: AbsValLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Abs."""
    graph.op("Abs", bottoms, tops[0])


def convert_bnll(layer: BNLLLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Softplus: log(1 + exp(x))."""
    graph.op("Softplus", bottoms, tops[0])


def _scale_and_shift(graph: OnnxGraph, x: str, scale: float | np.float32, shift: float | np.float32,
                     output: str | None = None) -> str:
    """shift + scale x, leaving out a multiplication by 1 and an addition of 0 as Caffe does."""
    steps = [("Mul", scale, "scale")] if scale != 1 else []
    steps += [("Add", shift, "shift")] if shift != 0 else []
    if not steps:
        return graph.identity(x, output) if output else x
    for i, (op_type, value, hint) in enumerate(steps):
        x = graph.op(op_type, [x, graph.constant(np.float32(value), hint)],
                     output if i == len(steps) - 1 else None)
    return x


def convert_power(layer: PowerLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """(shift + scale x) ^ power; Caffe's constant (1, or shift ^ power) when power * scale is 0."""
    if layer.diff_scale == 0:
        value = 1.0 if layer.power == 0 else float(layer.shift) ** float(layer.power)
        graph.op("Expand", [graph.constant(np.float32(value), "value"), graph.ints(graph.shape(tops[0]))],
                 tops[0])
        return
    if layer.power == 1:
        _scale_and_shift(graph, bottoms[0], layer.scale, layer.shift, tops[0])
        return
    base = _scale_and_shift(graph, bottoms[0], layer.scale, layer.shift)
    graph.op("Pow", [base, graph.constant(layer.power, "power")], tops[0])


def convert_exp(layer: ExpLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """exp(inner_scale x) * outer_scale, Caffe's folding of base ^ (shift + scale x)."""
    inner = _scale_and_shift(graph, bottoms[0], layer.inner_scale, 0)
    if layer.outer_scale == 1:
        graph.op("Exp", [inner], tops[0])
    else:
        graph.op("Mul", [graph.op("Exp", [inner]), graph.constant(layer.outer_scale, "outer_scale")], tops[0])


def convert_log(layer: LogLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """ln(shift + scale x) / ln(base)."""
    inner = _scale_and_shift(graph, bottoms[0], layer.input_scale, layer.input_shift)
    if layer.base_scale == 1:
        graph.op("Log", [inner], tops[0])
    else:
        graph.op("Mul", [graph.op("Log", [inner]), graph.constant(layer.base_scale, "base_scale")], tops[0])


def convert_threshold(layer: ThresholdLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """1 where x > threshold, else 0: Greater cast to float."""
    above = graph.op("Greater", [bottoms[0], graph.constant(np.float32(layer.threshold), "threshold")])
    graph.op("Cast", [above], tops[0], to=TensorProto.FLOAT)


def convert_clip(layer: ClipLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Clip to [min, max]; with min > max, Caffe's max(min, min(max, x)) gives min, so Min then Max."""
    low, high = (graph.constant(np.float32(v), name) for v, name in ((layer.min, "min"), (layer.max, "max")))
    if layer.min <= layer.max:
        graph.op("Clip", [bottoms[0], low, high], tops[0])
    else:
        graph.op("Max", [graph.op("Min", [bottoms[0], high]), low], tops[0])


def convert_swish(layer: SwishLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """x * sigmoid(beta x)."""
    gate = graph.op("Sigmoid", [_scale_and_shift(graph, bottoms[0], layer.beta, 0)])
    graph.op("Mul", [bottoms[0], gate], tops[0])


def convert_dropout(layer: DropoutLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Identity in the TEST phase (Caffe scales the kept inputs at train time); a TRAIN layer is refused."""
    if layer.phase == caffe_pb2.TRAIN:
        raise OnnxExportError("a TRAIN-phase Dropout drops at random; export the net in the TEST phase")
    graph.identity(bottoms[0], tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "ReLU": convert_relu,
    "PReLU": convert_prelu,
    "ELU": convert_elu,
    "Sigmoid": convert_sigmoid,
    "TanH": convert_tanh,
    "AbsVal": convert_absval,
    "BNLL": convert_bnll,
    "Power": convert_power,
    "Exp": convert_exp,
    "Log": convert_log,
    "Threshold": convert_threshold,
    "Clip": convert_clip,
    "Swish": convert_swish,
    "Dropout": convert_dropout,
}
