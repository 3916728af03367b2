"""Fixtures of the std pack's ONNX export tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["min", "default", "newest"])
def opset(request: pytest.FixtureRequest) -> int:
    """Each opset a converter must work at: the exporter's minimum and default, and the newest onnx knows."""
    onnx = pytest.importorskip("onnx")
    from caffe_core import onnx_export

    return {"min": onnx_export.MIN_OPSET, "default": onnx_export.DEFAULT_OPSET,
            "newest": onnx.defs.onnx_opset_version()}[request.param]
