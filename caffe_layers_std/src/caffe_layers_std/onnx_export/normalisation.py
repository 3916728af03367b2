"""ONNX converters of the normalising layers: BatchNorm, MVN, Softmax."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_std.common.batch_norm import BatchNormLayer
from caffe_layers_std.common.mvn import MVNLayer
from caffe_layers_std.common.softmax import SoftmaxLayer


def _normalise(graph: OnnxGraph, x: str, axes: Sequence[int], eps: np.float32, eps_on_std: bool,
               output: str | None = None) -> str:
    """(x - mean) / std over `axes` with the biased variance; eps is added to the variance or to the std."""
    centred = graph.op("Sub", [x, graph.reduce("ReduceMean", x, axes, keepdims=True)])
    variance = graph.reduce("ReduceMean", graph.op("Mul", [centred, centred]), axes, keepdims=True)
    eps_name = graph.constant(eps, "eps")
    if eps_on_std:
        std = graph.op("Add", [graph.op("Sqrt", [variance]), eps_name])
    else:
        std = graph.op("Sqrt", [graph.op("Add", [variance, eps_name])])
    return graph.op("Div", [centred, std], output)


def convert_batch_norm(layer: BatchNormLayer, graph: OnnxGraph, bottoms: Sequence[str],
                       tops: Sequence[str]) -> None:
    """BatchNormalization on the stored statistics / scale factor, or the batch's over every axis but 1."""
    if not layer.use_global_stats:
        axes = [0] + list(range(2, len(graph.shape(bottoms[0]))))
        _normalise(graph, bottoms[0], axes, np.float32(layer.eps), eps_on_std=False, output=tops[0])
        return
    s = np.float32(float(layer.blobs[2].cpu_data().reshape(-1)[0]))
    factor = np.float32(0) if s == 0 else np.float32(1) / s
    mean, variance = (blob.cpu_data().reshape(-1) * factor for blob in layer.blobs[:2])
    channels = mean.shape[0]
    inputs = [bottoms[0], graph.constant(np.ones(channels), "scale"),
              graph.constant(np.zeros(channels), "bias"), graph.constant(mean, "mean"),
              graph.constant(variance, "variance")]
    graph.op("BatchNormalization", inputs, tops[0], epsilon=float(np.float32(layer.eps)))


def convert_mvn(layer: MVNLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """x - mean (and / (std + eps)) per (num, channel) or per num, reshaped to Caffe's 4-D top."""
    top_shape = graph.shape(tops[0])
    groups = top_shape[0] if layer.across_channels else top_shape[0] * top_shape[1]
    rows = graph.reshape(bottoms[0], (groups, math.prod(top_shape) // groups))
    if layer.normalize_variance:
        result = _normalise(graph, rows, [1], layer.eps, eps_on_std=True)
    else:
        result = graph.op("Sub", [rows, graph.reduce("ReduceMean", rows, [1], keepdims=True)])
    graph.reshape(result, top_shape, tops[0])


def convert_softmax(layer: SoftmaxLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Softmax along `axis` (opset 13 on: along that one axis, as Caffe's)."""
    axis = layer.layer_param.softmax_param.axis % len(graph.shape(bottoms[0]))
    graph.op("Softmax", bottoms, tops[0], axis=axis)


CONVERTERS: dict[str, Callable[..., None]] = {
    "BatchNorm": convert_batch_norm,
    "MVN": convert_mvn,
    "Softmax": convert_softmax,
}
