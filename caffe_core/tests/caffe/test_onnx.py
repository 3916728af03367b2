"""caffe.onnx: pycaffe nets exported as they are, weights and input shapes included."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np
import onnx

import caffe
import caffe.onnx
from caffe_core.testing.onnx_check import onnxruntime_outputs


def test_export_takes_a_pycaffe_net_at_its_current_shapes(tmp_path, model):
    net = caffe.Net(model[0], caffe.TEST, weights=model[1])
    net.blobs["data"].reshape(1, 3, 4, 4)
    net.reshape()
    path = tmp_path / "tiny.onnx"
    exported = caffe.onnx.export(net, str(path), opset=15)
    assert onnx.load(path) == exported
    assert exported.opset_import[0].version == 15
    assert [d.dim_value for d in exported.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 4, 4]
    data = np.random.default_rng(1).uniform(-1, 1, (1, 3, 4, 4)).astype(np.float32)
    expected = net.forward(data=data)["ip"]
    np.testing.assert_allclose(onnxruntime_outputs(exported, {"data": data})["ip"], expected, atol=1e-5)


def test_to_model_writes_nothing(tmp_path, model):
    net = caffe.Net(model[0], caffe.TEST, weights=model[1])
    assert [o.name for o in caffe.onnx.to_model(net).graph.output] == ["ip"]
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".caffemodel", ".prototxt"]
