"""Pooling[darknet]'s converter: the vision pack's, which pads to the layer's windows (its extra one too)."""

from __future__ import annotations

from caffe_core.onnx_export.converters import Converter
from caffe_layers_vision.onnx_export.pooling import convert_pooling

CONVERTERS: dict[str, Converter] = {"Pooling[darknet]": convert_pooling}
