"""ONNX converters of the layers that combine or reduce values: Eltwise, Reduction, ArgMax."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from onnx import TensorProto

from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2
from caffe_layers_std.common.argmax import ArgMaxLayer
from caffe_layers_std.common.eltwise import EltwiseLayer
from caffe_layers_std.common.reduction import ReductionLayer

ELTWISE = caffe_pb2.EltwiseParameter
REDUCTION = caffe_pb2.ReductionParameter
REDUCE_OPS = {REDUCTION.SUM: "ReduceSum", REDUCTION.ASUM: "ReduceL1", REDUCTION.SUMSQ: "ReduceSumSquare",
              REDUCTION.MEAN: "ReduceSum"}


def _fold(graph: OnnxGraph, op_type: str, inputs: Sequence[str], output: str) -> None:
    """((a op b) op c) ...: binary nodes in Caffe's order, the last one writing `output`."""
    result = inputs[0]
    for i, operand in enumerate(inputs[1:], start=2):
        result = graph.op(op_type, [result, operand], output if i == len(inputs) else None)


def convert_eltwise(layer: EltwiseLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """PROD as Mul, SUM as Add of the bottoms times their coeff, MAX as Max."""
    if layer.operation == ELTWISE.PROD:
        _fold(graph, "Mul", bottoms, tops[0])
    elif layer.operation == ELTWISE.SUM:
        terms = [bottom if coeff == 1 else graph.op("Mul", [bottom, graph.constant(coeff, "coeff")])
                 for bottom, coeff in zip(bottoms, layer.coeffs, strict=True)]
        _fold(graph, "Add", terms, tops[0])
    else:
        graph.op("Max", bottoms, tops[0])


def convert_reduction(layer: ReductionLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """ReduceSum / ReduceL1 / ReduceSumSquare over the axes from `axis` on, times coeff (/ count for MEAN)."""
    axes = list(range(layer.axis, len(graph.shape(bottoms[0]))))
    op_type = REDUCE_OPS[layer.op]
    if layer.coeff == 1:
        graph.reduce(op_type, bottoms[0], axes, keepdims=False, output=tops[0])
        return
    reduced = graph.reduce(op_type, bottoms[0], axes, keepdims=False)
    graph.op("Mul", [reduced, graph.constant(np.float32(layer.coeff), "coeff")], tops[0])


def _float_indices(graph: OnnxGraph, flipped_indices: str, dim: int, output: str | None = None) -> str:
    """Indices into the reversed axis mapped back (dim - 1 - i), as float like Caffe's top holds them."""
    indices = graph.op("Sub", [graph.constant(np.int64(dim - 1), "last"), flipped_indices])
    return graph.op("Cast", [indices], output, to=TensorProto.FLOAT)


def convert_argmax(layer: ArgMaxLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """TopK on the axis reversed, so that ties go to the larger index as in Caffe; indices as float."""
    shape = graph.shape(bottoms[0])
    if layer.has_axis:
        axis, x = layer.axis, bottoms[0]
        dim = shape[axis]
    else:
        axis, dim = 1, math.prod(shape[1:])
        x = graph.reshape(bottoms[0], (shape[0], dim))
    reverse = [graph.ints([-1], "starts"), graph.ints([np.iinfo(np.int64).min], "ends"),
               graph.ints([axis], "axes"), graph.ints([-1], "steps")]
    flipped = graph.op("Slice", [x, *reverse])
    top_k = [flipped, graph.ints([layer.top_k], "k")]
    if layer.has_axis and layer.out_max_val:
        graph.node("TopK", top_k, [tops[0], graph.fresh("indices")], axis=axis)
        return
    values, flipped_indices = graph.node("TopK", top_k, 2, axis=axis)
    if layer.has_axis:
        _float_indices(graph, flipped_indices, dim, tops[0])
        return
    result = _float_indices(graph, flipped_indices, dim)
    if layer.out_max_val:
        pair = [graph.reshape(name, (shape[0], 1, layer.top_k)) for name in (result, values)]
        result = graph.op("Concat", pair, axis=1)
    graph.reshape(result, graph.shape(tops[0]), tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "Eltwise": convert_eltwise,
    "Reduction": convert_reduction,
    "ArgMax": convert_argmax,
}
