"""DenseBlock's converter (TEST): per transition BatchNormalization, Relu, [Conv 1x1, BatchNormalization,
Relu], Conv 3x3 with the kernel rotated (the fork convolves, ONNX's Conv correlates), Concat."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_core.proto import caffe_pb2
from caffe_layers_ocr.dense_block import EPS, DenseBlockLayer


def _norm_relu(layer: DenseBlockLayer, graph: OnnxGraph, x: str, indices: Sequence[int],
               divide: np.float32) -> str:
    """BatchNormalization with the blobs at `indices` (scale, bias, mean, variance), then Relu."""
    scale, bias, mean, variance = (layer.blobs[i].cpu_data().reshape(-1) for i in indices)
    inputs = [x, graph.constant(scale, "scale"), graph.constant(bias, "bias"),
              graph.constant(mean * divide, "mean"), graph.constant(variance * divide, "variance")]
    normalised = graph.op("BatchNormalization", inputs, epsilon=float(EPS))
    return graph.op("Relu", [normalised])


def _conv(graph: OnnxGraph, x: str, weight: np.ndarray, pad: int) -> str:
    """The fork's true convolution as ONNX's Conv (a correlation) with the kernel rotated by 180 degrees."""
    rotated = np.ascontiguousarray(weight[:, :, ::-1, ::-1])
    return graph.op("Conv", [x, graph.constant(rotated, "filter")], kernel_shape=list(weight.shape[2:]),
                    pads=[pad] * 4)


def convert_dense_block(layer: DenseBlockLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """The TEST forward: stored statistics, divided by the factor blob when it is non-zero."""
    if layer.phase == caffe_pb2.TRAIN:
        raise OnnxExportError("in TRAIN the block normalises by each batch's statistics and updates the "
                              "running ones; export the TEST net")
    factor = float(layer.blobs[-1].cpu_data().reshape(-1)[0])
    divide = np.float32(1) if factor == 0 else np.float32(1) / np.float32(factor)
    count = layer.transitions
    features = bottoms[0]
    for t in range(count):
        activated = _norm_relu(layer, graph, features, [k * count + t for k in (1, 2, 3, 4)], divide)
        if layer.use_bc:
            squeezed = _conv(graph, activated, layer.blobs[5 * count + t].cpu_data(), 0)
            activated = _norm_relu(layer, graph, squeezed, [k * count + t for k in (6, 7, 8, 9)], divide)
        new = _conv(graph, activated, layer.blobs[t].cpu_data(), 1)
        features = graph.op("Concat", [features, new], tops[0] if t == count - 1 else None, axis=1)


CONVERTERS: dict[str, Converter] = {"DenseBlock": convert_dense_block}
