"""ONNX export of SegNet's Dropout (identity, or ONNX's sampling Dropout for Monte-Carlo dropout) and the
refusal of DenseImageData."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core import onnx_export
from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import assert_onnx_matches, net_from_text, onnxruntime_outputs, randomise
from caffe_layers_seg import plugin

INPUT = 'layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 64 dim: 150 } } }\n'


def _dropout_net(sample, phase=caffe_pb2.TEST):
    dropout = (f'layer {{ name: "drop" type: "Dropout" bottom: "data" top: "out" dropout_param '
               f'{{ dropout_ratio: 0.25 sample_weights_test: {sample} }} }}')
    net = net_from_text(INPUT + dropout, phase)
    randomise(net, np.random.default_rng(7))
    return net


def test_dropout_without_sampling_is_identity():
    model = assert_onnx_matches(_dropout_net("false"))
    assert [node.op_type for node in model.graph.node] == ["Identity"]


@pytest.mark.parametrize(("sample", "phase"), [("true", caffe_pb2.TEST), ("false", caffe_pb2.TRAIN)])
def test_sampling_dropout_draws_a_scaled_mask(sample, phase):
    net = _dropout_net(sample, phase)
    model = onnx_export.to_model(net)
    assert [node.op_type for node in model.graph.node] == ["Dropout"]
    x = np.array(net.blob_by_name("data").data)
    y = onnxruntime_outputs(model, {"data": x})["out"]
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.03


def test_dense_image_data_is_refused():
    converters = plugin.caffe_onnx_converters()
    with pytest.raises(OnnxExportError, match="replace it with an Input layer"):
        converters["DenseImageData"](None, None, [], ["data", "label"])
