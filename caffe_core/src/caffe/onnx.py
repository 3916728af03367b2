"""`caffe.onnx.export(net, path)`: a pycaffe net (or a core Net) written as an ONNX model."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from caffe_core import onnx_export
from caffe_core.onnx_export import DEFAULT_OPSET

if TYPE_CHECKING:
    import onnx

    from caffe.pycaffe import Net
    from caffe_core.net import Net as CoreNet

__all__ = ["DEFAULT_OPSET", "export", "to_model"]


def export(net: Net | CoreNet, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """Writes the net's current weights and input shapes as an ONNX file and returns the ModelProto."""
    return onnx_export.export(cast("CoreNet", getattr(net, "core", net)), path, opset)


def to_model(net: Net | CoreNet, opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """The net as an ONNX ModelProto, checked by onnx.checker, without writing it."""
    return onnx_export.to_model(cast("CoreNet", getattr(net, "core", net)), opset)
