"""ONNX converter of caffe-fast-rcnn's Dropout with scale_train, at its TEST-phase formula."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2


def convert_scale_train_dropout(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str],
                                tops: Sequence[str]) -> None:
    """TEST phase: identity with scale_train (the default), else x times the layer's own (1 - ratio)."""
    if layer.phase == caffe_pb2.TRAIN:
        raise OnnxExportError("a TRAIN-phase Dropout draws a new random mask at every forward; export the "
                              "net built in the TEST phase")
    if layer.scale_train:
        graph.identity(bottoms[0], tops[0])
    else:
        graph.op("Mul", [bottoms[0], graph.constant(layer.test_factor, "keep_ratio")], tops[0])


CONVERTERS = {"Dropout[scale_train]": convert_scale_train_dropout}
