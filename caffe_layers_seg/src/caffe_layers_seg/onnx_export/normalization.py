"""ONNX converters of the pack's normalisations: BN[pspnet], BN[segnet] and BatchNormKyle, with the stored
statistics where the layer uses those, else the batch's (ReduceMean over the batch and spatial axes)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2
from caffe_layers_seg.batch_norm_kyle import BatchNormKyleLayer
from caffe_layers_seg.bn_pspnet import INVERSE_STD, PSPNetBNLayer
from caffe_layers_seg.bn_segnet import SEGNET_EPS, SegNetBNLayer

F32 = np.float32


class _Channels:
    """Per-channel constants and reductions for one bottom whose channels are axis 1 (or the only axis)."""

    def __init__(self, graph: OnnxGraph, bottom: str) -> None:
        self.graph = graph
        self.rank = len(graph.shape(bottom))

    def constant(self, values: np.ndarray, hint: str) -> str:
        """A (C,) vector as an initializer shaped (C, 1, ...) to broadcast over the bottom."""
        values = np.asarray(values, dtype=F32).reshape(-1)
        return self.graph.constant(values.reshape(-1, *(1,) * (self.rank - 2)) if self.rank >= 2 else values,
                                   hint)

    def mean(self, x: str) -> str:
        """The mean over the batch and the spatial axes, kept for broadcasting."""
        return self.graph.reduce("ReduceMean", x, [0, *range(2, self.rank)], keepdims=True)

    def scale_shift(self, x: str, scale: np.ndarray, shift: np.ndarray, output: str) -> str:
        """x * scale + shift, per channel."""
        scaled = self.graph.op("Mul", [x, self.constant(scale, "scale")])
        return self.graph.op("Add", [scaled, self.constant(shift, "shift")], output)


def _batch_std(graph: OnnxGraph, variance: str, eps: float | np.float32) -> str:
    """sqrt(variance + eps)."""
    return graph.op("Sqrt", [graph.op("Add", [variance, graph.constant(F32(eps), "eps")])])


def convert_bn_pspnet(layer: PSPNetBNLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """slope (x - mean) / std + bias: stored statistics (TEST or frozen), else the batch's (biased) ones."""
    channels = _Channels(graph, bottoms[0])
    slope, bias, stored_mean, stored = (blob.cpu_data() for blob in layer.blobs)
    if layer.frozen or layer.phase == caffe_pb2.TEST:
        inv_std = stored if layer.statistics == INVERSE_STD else np.power(stored + layer.eps, F32(-0.5))
        centred = graph.op("Sub", [bottoms[0], channels.constant(stored_mean, "mean")])
        channels.scale_shift(centred, inv_std.reshape(-1) * slope.reshape(-1), bias, tops[0])
        return
    centred = graph.op("Sub", [bottoms[0], channels.mean(bottoms[0])])
    variance = channels.mean(graph.op("Mul", [centred, centred]))
    normalised = graph.op("Div", [centred, _batch_std(graph, variance, layer.eps)])
    channels.scale_shift(normalised, slope, bias, tops[0])


def convert_bn_segnet(layer: SegNetBNLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """scale x + shift (INFERENCE), else scale (x - E x) / sqrt(E x^2 - (E x)^2 + 1e-9) + shift by batch.

    LEARN normalises by the batch statistics in every phase; tops 1 and 2, where given, are their mean and
    variance.
    """
    channels = _Channels(graph, bottoms[0])
    scale, shift = (blob.cpu_data() for blob in layer.blobs)
    if not layer.learn:
        channels.scale_shift(bottoms[0], scale, shift, tops[0])
        return
    mean = channels.mean(bottoms[0])
    mean_of_squares = channels.mean(graph.op("Mul", [bottoms[0], bottoms[0]]))
    variance = graph.op("Sub", [mean_of_squares, graph.op("Mul", [mean, mean])])
    centred = graph.op("Sub", [bottoms[0], mean])
    normalised = graph.op("Div", [centred, _batch_std(graph, variance, SEGNET_EPS)])
    channels.scale_shift(normalised, scale, shift, tops[0])
    for statistic, top in zip((mean, variance), tops[1:], strict=False):
        graph.reshape(statistic, graph.shape(top), top)


def convert_batch_norm_kyle(layer: BatchNormKyleLayer, graph: OnnxGraph, bottoms: Sequence[str],
                            tops: Sequence[str]) -> None:
    """(x - mean) / sqrt(var + eps) [* alpha + beta], stored (use_global_stats) or batch statistics.

    The stored mean and variance are divided by the stored scale factor (0 when that is 0), as Caffe's
    BatchNorm; the batch variance is the biased one.
    """
    channels = _Channels(graph, bottoms[0])
    if layer.use_global_stats:
        scale_factor = F32(layer.blobs[2].cpu_data().reshape(-1)[0])
        factor = F32(0) if scale_factor == 0 else F32(1) / scale_factor
        mean = channels.constant(layer.blobs[0].cpu_data() * factor, "mean")
        variance = layer.blobs[1].cpu_data() * factor
        std = channels.constant(np.power(variance + layer.eps, F32(0.5)), "std")
        centred = graph.op("Sub", [bottoms[0], mean])
    else:
        centred = graph.op("Sub", [bottoms[0], channels.mean(bottoms[0])])
        std = _batch_std(graph, channels.mean(graph.op("Mul", [centred, centred])), layer.eps)
    if not layer.use_alpha_beta:
        graph.op("Div", [centred, std], tops[0])
        return
    normalised = graph.op("Div", [centred, std])
    channels.scale_shift(normalised, layer.blobs[3].cpu_data(), layer.blobs[4].cpu_data(), tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "BN[pspnet]": convert_bn_pspnet,
    "BN[segnet]": convert_bn_segnet,
    "BatchNormKyle": convert_batch_norm_kyle,
}
