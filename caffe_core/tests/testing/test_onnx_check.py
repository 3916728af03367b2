"""The ONNX checking helpers pack authors use: the newest opset both onnx and onnxruntime can take."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import onnx
import onnxruntime

from caffe_core import onnx_export
from caffe_core.testing import onnx_check


@pytest.fixture(autouse=True)
def _fresh_probe():
    onnx_check.newest_opset.cache_clear()
    yield
    onnx_check.newest_opset.cache_clear()


def test_a_net_exported_at_the_newest_opset_runs_in_onnxruntime():
    assert onnx_export.MIN_OPSET <= onnx_check.newest_opset() <= onnx.defs.onnx_opset_version()
    net = onnx_check.net_from_text(onnx_check.input_layer("x", (2, 3)) + """
        layer { name: "relu" type: "ReLU" bottom: "x" top: "y" }""")
    x = net.blob_by_name("x")
    x.data[...] = [[-1, 0, 2], [3, -4, 5]]
    outputs = onnx_check.onnxruntime_outputs(onnx_export.to_model(net, onnx_check.newest_opset()),
                                             {"x": x.data.copy()})
    assert outputs["y"].tolist() == [[0, 0, 2], [3, 0, 5]]


def test_newest_opset_steps_down_to_the_ir_version_onnxruntime_takes(monkeypatch):
    real_session = onnxruntime.InferenceSession

    def session_refusing_ir_above_8(model_bytes, providers):
        if onnx.load_from_string(model_bytes).ir_version > 8:
            raise RuntimeError("Unsupported model IR version")
        return real_session(model_bytes, providers=providers)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session_refusing_ir_above_8)
    # onnx's VERSION_TABLE: opsets 15 to 18 need IR version 8, opset 19 needs 9.
    assert onnx_check.newest_opset() == 18


def test_newest_opset_is_never_below_the_exporters_minimum(monkeypatch):
    def refuse_all(model_bytes, providers):
        raise RuntimeError("refused")

    monkeypatch.setattr(onnxruntime, "InferenceSession", refuse_all)
    assert onnx_check.newest_opset() == onnx_export.MIN_OPSET
