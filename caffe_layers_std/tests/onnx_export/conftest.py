"""Fixtures of the std pack's ONNX export tests."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["min", "default", "newest"])
def opset(request: pytest.FixtureRequest) -> int:
    """Each opset a converter must work at: the exporter's minimum and default, and the newest both onnx and
    onnxruntime know."""
    from caffe_core.testing.onnx_check import newest_opset, require_onnx

    require_onnx()
    from caffe_core import onnx_export

    return {"min": onnx_export.MIN_OPSET, "default": onnx_export.DEFAULT_OPSET,
            "newest": newest_opset()}[request.param]
