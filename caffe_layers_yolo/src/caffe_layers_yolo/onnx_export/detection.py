"""The YOLO detection outputs' converters, which refuse: their candidate count, sort and greedy NMS depend
on the data."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter


def convert_detection_output(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str],
                             tops: Sequence[str]) -> None:
    """Refused, naming the heads to export instead."""
    raise OnnxExportError(
        f"{layer.type} has no exact ONNX equivalent: its thresholded candidates, confidence sort and the "
        "fork's class-agnostic greedy NMS (IoU >= threshold suppresses, centre-form boxes) give a "
        "data-dependent "
        "number of rows that ONNX's NonMaxSuppression does not reproduce. Remove the layer so that the net "
        f"ends at its heads ({', '.join(layer.layer_param.bottom)}), export that, and decode outside the "
        "model")


CONVERTERS: dict[str, Converter] = {
    "YoloDetectionOutput": convert_detection_output,
    "Yolov3DetectionOutput": convert_detection_output,
}
