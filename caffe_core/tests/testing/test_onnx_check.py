"""The ONNX checking helpers pack authors use: the skip without onnx, one-layer nets, the nodes' op types
and the newest opset both onnx and onnxruntime can take."""

import sys

import pytest

from caffe_core.testing import onnx_check

onnx_check.require_onnx()

import numpy as np
import onnx
import onnxruntime

from caffe_core import onnx_export


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


def test_layer_text_wires_bottoms_and_tops():
    text = onnx_check.layer_text("Split", "", bottoms=("a",), tops=("b", "c"), name="s")
    assert text == 'layer { name: "s" type: "Split" bottom: "a" top: "b" top: "c"  }\n'


def test_one_layer_net_has_random_inputs_of_the_given_shapes():
    inputs = {"a": (2, 3), "b": (4,)}
    text = onnx_check.layer_text("Split", bottoms=("a",), tops=("c", "d"))
    net = onnx_check.one_layer_net(text, inputs, seed=5)
    assert [blob.shape for blob in net.input_blobs] == [(2, 3), (4,)]
    again = onnx_check.one_layer_net(text, inputs, seed=5)
    np.testing.assert_array_equal(net.blob_by_name("a").data, again.blob_by_name("a").data)
    assert np.abs(net.blob_by_name("a").data).max() <= 1
    assert net.blob_by_name("a").data.std() > 0


def test_op_types_lists_the_nodes_in_order():
    from onnx import TensorProto, helper

    x, y = (helper.make_tensor_value_info(name, TensorProto.FLOAT, [1]) for name in "xy")
    nodes = [helper.make_node("Relu", ["x"], ["h"]), helper.make_node("Identity", ["h"], ["y"])]
    graph = helper.make_graph(nodes, "two", [x], [y])
    assert onnx_check.op_types(helper.make_model(graph)) == ["Relu", "Identity"]


def test_require_onnx_skips_without_onnxruntime(monkeypatch):
    onnx_check.require_onnx()
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(pytest.skip.Exception, match="onnxruntime"):
        onnx_check.require_onnx()
