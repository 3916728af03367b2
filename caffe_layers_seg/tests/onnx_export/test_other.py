"""ONNX export of SegNet's Dropout (identity, or ONNX's sampling Dropout for Monte-Carlo dropout) and the
refusal of DenseImageData."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    one_layer_net,
    onnxruntime_outputs,
    op_types,
    require_onnx,
)
from caffe_layers_seg import plugin

require_onnx()

from caffe_core import onnx_export


def _dropout_net(sample, phase=caffe_pb2.TEST):
    dropout = layer_text("Dropout", f"dropout_param {{ dropout_ratio: 0.25 sample_weights_test: {sample} }}",
                         name="drop")
    return one_layer_net(dropout, {"data": (64, 150)}, 7, phase)


def test_dropout_without_sampling_is_identity():
    model = assert_onnx_matches(_dropout_net("false"))
    assert op_types(model) == ["Identity"]


@pytest.mark.parametrize(("sample", "phase"), [("true", caffe_pb2.TEST), ("false", caffe_pb2.TRAIN)])
def test_sampling_dropout_draws_a_scaled_mask(sample, phase):
    net = _dropout_net(sample, phase)
    model = onnx_export.to_model(net)
    assert op_types(model) == ["Dropout"]
    x = np.array(net.blob_by_name("data").data)
    y = onnxruntime_outputs(model, {"data": x})["out"]
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.75, rtol=1e-6)
    assert abs(kept.mean() - 0.75) < 0.03


def test_dense_image_data_is_refused():
    converters = plugin.caffe_onnx_converters()
    with pytest.raises(OnnxExportError, match="replace it with an Input layer"):
        converters["DenseImageData"](None, None, [], ["data", "label"])
