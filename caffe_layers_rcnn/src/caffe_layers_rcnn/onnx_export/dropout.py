"""ONNX converter of caffe-fast-rcnn's Dropout with scale_train, at its TEST-phase formula."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_core.proto import caffe_pb2
from caffe_layers_rcnn.dropout_scale_train import ScaleTrainDropoutLayer


def convert_scale_train_dropout(layer: ScaleTrainDropoutLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                tops: Sequence[str]) -> None:
    """TEST phase: identity with scale_train (the default), else x times the layer's own (1 - ratio)."""
    if layer.phase == caffe_pb2.TRAIN:
        raise OnnxExportError("a TRAIN-phase Dropout draws a new random mask at every forward; export the "
                              "net built in the TEST phase")
    if layer.scale_train:
        graph.identity(bottoms[0], tops[0])
    else:
        graph.op("Mul", [bottoms[0], graph.constant(layer.test_factor, "keep_ratio")], tops[0])


CONVERTERS: dict[str, Converter] = {"Dropout[scale_train]": convert_scale_train_dropout}
