"""ONNX converters of the layers that apply learned (or given) weights: InnerProduct, Embed, Scale, Bias."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from onnx import TensorProto

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_std.common.bias import BiasLayer
from caffe_layers_std.common.embed import EmbedLayer
from caffe_layers_std.common.inner_product import InnerProductLayer
from caffe_layers_std.common.scale import ScaleLayer

Shape = tuple[int, ...]


def convert_inner_product(layer: InnerProductLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """Gemm on the bottom flattened from `axis` to (M, K), reshaped to the top's shape when that differs."""
    shape = graph.shape(bottoms[0])
    m, k, n = math.prod(shape[:layer.axis]), layer.k, layer.num_output
    x = bottoms[0] if shape == (m, k) else graph.reshape(bottoms[0], (m, k))
    weight = layer.blobs[0].cpu_data().reshape((k, n) if layer.transpose else (n, k))
    inputs = [x, graph.constant(weight, "weight")]
    if layer.bias_term:
        inputs.append(graph.constant(layer.blobs[1].cpu_data().reshape(n), "bias"))
    top_shape = graph.shape(tops[0])
    gemm_top = tops[0] if top_shape == (m, n) else None
    product = graph.op("Gemm", inputs, gemm_top, transB=int(not layer.transpose))
    if gemm_top is None:
        graph.reshape(product, top_shape, tops[0])


def convert_embed(layer: EmbedLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Gather of the table's rows at the (float-stored) indices, plus the bias."""
    indices = graph.op("Cast", [bottoms[0]], to=TensorProto.INT64)
    table = graph.constant(layer.blobs[0].cpu_data().reshape(layer.input_dim, layer.num_output), "weight")
    if not layer.bias_term:
        graph.op("Gather", [table, indices], tops[0], axis=0)
        return
    rows = graph.op("Gather", [table, indices], axis=0)
    graph.op("Add", [rows, graph.constant(layer.blobs[1].cpu_data().reshape(-1), "bias")], tops[0])


def _broadcast_shape(bottom_shape: Shape, operand_shape: Shape, axis: int) -> Shape:
    """The operand's shape followed by ones for the bottom's axes after it, so it broadcasts from `axis`."""
    if not operand_shape:
        return ()
    start = axis % len(bottom_shape)
    return operand_shape + (1,) * (len(bottom_shape) - start - len(operand_shape))


def _learned_operand(graph: OnnxGraph, blob: Blob, bottom_shape: Shape, axis: int, hint: str) -> str:
    """A learned Scale/Bias blob as an initializer shaped to broadcast over the bottom from `axis`."""
    return graph.constant(blob.cpu_data().reshape(_broadcast_shape(bottom_shape, blob.shape, axis)), hint)


def _bottom_operand(graph: OnnxGraph, operand: str, bottom_shape: Shape, axis: int) -> str:
    """The second bottom of Scale/Bias, reshaped to broadcast over the first from `axis` when it must be."""
    operand_shape = graph.shape(operand)
    shape = _broadcast_shape(bottom_shape, operand_shape, axis)
    return operand if shape == operand_shape else graph.reshape(operand, shape)


def _operand(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], axis: int, hint: str) -> str:
    """The Scale/Bias operand: the second bottom, else the learned blob, ready to broadcast."""
    shape = graph.shape(bottoms[0])
    if len(bottoms) > 1:
        return _bottom_operand(graph, bottoms[1], shape, axis)
    return _learned_operand(graph, layer.blobs[0], shape, axis, hint)


def convert_scale(layer: ScaleLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Mul by the scale broadcast from `axis` (the second bottom or the learned blob), then Add the bias."""
    axis = layer.layer_param.scale_param.axis
    gamma = _operand(layer, graph, bottoms, axis, "scale")
    if layer.bias_layer is None:
        graph.op("Mul", [bottoms[0], gamma], tops[0])
        return
    beta = _learned_operand(graph, layer.bias_layer.blobs[0], graph.shape(bottoms[0]), axis, "bias")
    graph.op("Add", [graph.op("Mul", [bottoms[0], gamma]), beta], tops[0])


def convert_bias(layer: BiasLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Add of the bias broadcast from `axis` (the second bottom or the learned blob)."""
    graph.op("Add", [bottoms[0], _operand(layer, graph, bottoms, layer.layer_param.bias_param.axis, "bias")],
             tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "InnerProduct": convert_inner_product,
    "Embed": convert_embed,
    "Scale": convert_scale,
    "Bias": convert_bias,
}
