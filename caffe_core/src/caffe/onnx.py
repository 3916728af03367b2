"""`caffe.onnx.export(net, path)`: a pycaffe net (or a core Net) written as an ONNX model."""

from __future__ import annotations

import os
from typing import Any

from caffe_core import onnx_export
from caffe_core.onnx_export import DEFAULT_OPSET

__all__ = ["DEFAULT_OPSET", "export", "to_model"]


def export(net: Any, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> Any:
    """Writes the net's current weights and input shapes as an ONNX file and returns the ModelProto."""
    return onnx_export.export(getattr(net, "core", net), path, opset)


def to_model(net: Any, opset: int = DEFAULT_OPSET) -> Any:
    """The net as an ONNX ModelProto, checked by onnx.checker, without writing it."""
    return onnx_export.to_model(getattr(net, "core", net), opset)
