"""The caffe_to_onnx tool: a deploy prototxt and its weights in, an ONNX file giving the net's outputs out."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np
import onnx

import caffe
from caffe_core.testing.onnx_check import onnxruntime_outputs
from caffe_core.tools import caffe_to_onnx


def test_the_tool_writes_the_nets_weights_and_outputs(tmp_path, model, capsys):
    model_file, weights_file = model
    net = caffe.Net(model_file, caffe.TEST, weights=weights_file)
    out = tmp_path / "tiny.onnx"
    assert caffe_to_onnx.main([model_file, weights_file, str(out), "--batch_size", "5"]) == 0
    exported = onnx.load(out)
    nodes = len(exported.graph.node)
    assert capsys.readouterr().out == f"Wrote {out}: opset 17, {nodes} nodes, inputs data, outputs ip\n"
    weights = [onnx.numpy_helper.to_array(t) for t in exported.graph.initializer]
    trained = net.params["ip"][0].data
    assert any(np.array_equal(w, trained) or np.array_equal(w, trained.T) for w in weights)
    data = np.random.default_rng(0).uniform(-1, 1, (5, 3, 4, 4)).astype(np.float32)
    net.blobs["data"].reshape(5, 3, 4, 4)
    expected = net.forward(data=data)["ip"]
    np.testing.assert_allclose(onnxruntime_outputs(exported, {"data": data})["ip"], expected, atol=1e-5)


def test_the_tool_takes_an_opset(tmp_path, model):
    model_file, weights_file = model
    out = tmp_path / "tiny.onnx"
    assert caffe_to_onnx.main([model_file, weights_file, str(out), "--opset", "13"]) == 0
    assert onnx.load(out).opset_import[0].version == 13


def test_bad_input_is_one_clear_line_and_exit_status_1(tmp_path, model, capsys):
    model_file, weights_file = model
    out = tmp_path / "tiny.onnx"
    assert caffe_to_onnx.main([model_file, str(tmp_path / "missing.caffemodel"), str(out)]) == 1
    assert "missing.caffemodel" in capsys.readouterr().err
    assert caffe_to_onnx.main([model_file, weights_file, str(out), "--opset", "7"]) == 1
    assert "caffe_to_onnx: opset 7 is not supported" in capsys.readouterr().err
    assert not out.exists()
