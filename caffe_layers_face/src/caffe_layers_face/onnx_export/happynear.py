"""Converters for happynear's layers: Flip (negative-step Slices), Normalize[happynear] (reductions, Sqrt,
Div), ChannelScale (Mul), LabelSpecificAdd (Identity at TEST) and InnerProduct[happynear] (Gemm of the
normalised weights)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_core.proto import caffe_pb2
from caffe_layers_face.channel_scale import ChannelScaleLayer
from caffe_layers_face.flip import FlipLayer
from caffe_layers_face.label_specific_add import LabelSpecificAddLayer
from caffe_layers_face.normalize_happynear import CPU_EPS, HappynearNormalizeLayer
from caffe_layers_face.normalized_inner_product import CPU_EPS as WEIGHT_EPS
from caffe_layers_face.normalized_inner_product import NormalizedInnerProductLayer

F32 = np.float32
INT64_MIN = np.iinfo(np.int64).min


def legacy_shape(shape: Sequence[int]) -> list[int]:
    """Caffe's (num, channels, height, width) view of a shape of at most 4 axes."""
    dims = list(shape) + [1] * (4 - len(shape))
    return dims[:4]


def convert_flip(layer: FlipLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """A Slice with step -1 over the flipped axes of the (N, C, H, W) view."""
    shape = list(graph.shape(bottoms[0]))
    axes = [axis for axis, on in ((2, layer.flip_height), (3, layer.flip_width)) if on]
    if not axes:
        graph.op("Identity", [bottoms[0]], tops[0])
        return
    view = graph.reshape(bottoms[0], legacy_shape(shape))
    flipped = graph.op("Slice", [view, graph.ints([-1] * len(axes), "starts"),
                                 graph.ints([INT64_MIN] * len(axes), "ends"), graph.ints(axes, "axes"),
                                 graph.ints([-1] * len(axes), "steps")])
    graph.reshape(flipped, shape, tops[0])


def convert_normalize(layer: HappynearNormalizeLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """x / norm, the norm over axis 1 of the (N, C, H*W) view with the fork's CPU epsilon (1e-6)."""
    shape = legacy_shape(graph.shape(bottoms[0]))
    view = graph.reshape(bottoms[0], [shape[0], shape[1], shape[2] * shape[3]])
    if layer.normalize_type == "L2":
        summed = graph.reduce("ReduceSumSquare", view, [1], keepdims=True)
        norm = graph.op("Sqrt", [graph.op("Add", [summed, graph.constant(F32(CPU_EPS), "eps")])])
    else:
        summed = graph.reduce("ReduceL1", view, [1], keepdims=True)
        norm = graph.op("Add", [summed, graph.constant(F32(CPU_EPS), "eps")])
    graph.reshape(graph.op("Div", [view, norm]), shape, tops[0])
    if len(tops) == 2:
        graph.reshape(norm, [shape[0], 1, shape[2], shape[3]], tops[1])


def convert_channel_scale(layer: ChannelScaleLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """x times the per-sample scales broadcast over the channels (or the stored global scale, clipped)."""
    shape = list(graph.shape(bottoms[0]))
    if not layer.do_forward:
        graph.op("Identity", [bottoms[0]], tops[0])
        return
    if layer.global_scale:
        if len(tops) == 2:
            raise OnnxExportError("the global-scale top is a training statistic; export the layer with one "
                                  "top")
        stored = layer.blobs[0].cpu_data().reshape(-1)[0]
        value = F32(min(max(stored, layer.min_global_scale), layer.max_global_scale))
        graph.op("Mul", [bottoms[0], graph.constant(value, "global_scale")], tops[0])
        return
    legacy = legacy_shape(shape)
    view = graph.reshape(bottoms[0], [legacy[0], legacy[1], legacy[2] * legacy[3]])
    scale = graph.reshape(bottoms[1], [legacy[0], 1, legacy[2] * legacy[3]])
    graph.reshape(graph.op("Mul", [view, scale]), shape, tops[0])


def convert_label_specific_add(layer: LabelSpecificAddLayer, graph: OnnxGraph, bottoms: Sequence[str],
                               tops: Sequence[str]) -> None:
    """At TEST the layer copies its scores (the margin applies only while training)."""
    if layer.phase != caffe_pb2.TEST:
        raise OnnxExportError("the margin is a training-time operation; export the TEST net, where the layer "
                              "copies its scores")
    if len(tops) == 2:
        raise OnnxExportError("the bias top is a training statistic; export the layer with one top")
    graph.op("Identity", [bottoms[0]], tops[0])


def convert_normalized_inner_product(layer: NormalizedInnerProductLayer, graph: OnnxGraph,
                                     bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """A Gemm with the weight rows normalised as the layer's next forward would (the fork's CPU epsilon)."""
    rows = layer.blobs[0].cpu_data().reshape(layer.num_output, layer.k).astype(F32)
    rows = rows * (F32(1) / np.sqrt((rows * rows).sum(axis=1, keepdims=True) + WEIGHT_EPS))
    weight = rows.reshape(layer.k, layer.num_output).T if layer.transpose else rows
    shape = list(graph.shape(bottoms[0]))
    flat = graph.reshape(bottoms[0], [layer.m, layer.k])
    inputs = [flat, graph.constant(weight, "weight")]
    if layer.bias_term:
        inputs.append(graph.constant(layer.blobs[1].cpu_data().reshape(-1), "bias"))
    product = graph.op("Gemm", inputs, transB=1)
    graph.reshape(product, shape[:layer.axis] + [layer.num_output], tops[0])


CONVERTERS: dict[str, Converter] = {
    "Flip": convert_flip,
    "Normalize[happynear]": convert_normalize,
    "ChannelScale": convert_channel_scale,
    "LabelSpecificAdd": convert_label_specific_add,
    "InnerProduct[happynear]": convert_normalized_inner_product,
}
