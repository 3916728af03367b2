"""ONNX export of Lstm (one LSTM node, gates reordered) and DenseBlock (TEST: BatchNormalization, Relu, Conv
with rotated kernels, Concat): onnxruntime gives the layers' own outputs. A clip bottom and a TRAIN
DenseBlock are refused, saying why."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export

NEWEST = newest_opset()


@pytest.mark.parametrize("shape", [(5, 2, 3), (4, 3, 2, 2)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_lstm_is_one_onnx_lstm(shape, opset):
    net = one_layer_net(layer_text("Lstm", "lstm_param { num_output: 4 }"), {"data": shape}, seed=1)
    model = assert_onnx_matches(net, opset)
    assert op_types(model) == ["Reshape", "LSTM", "Reshape"]


def test_lstm_with_a_clip_bottom_is_refused():
    net = one_layer_net(layer_text("Lstm", "lstm_param { num_output: 2 }", bottoms=("data", "clip")),
                        {"data": (3, 1, 2), "clip": (3, 1)}, seed=2)
    with pytest.raises(OnnxExportError, match="clip bottom"):
        onnx_export.to_model(net)


def _dense_block_net(use_bc: bool, factor: float, phase: caffe_pb2.Phase = caffe_pb2.TEST):
    text = layer_text("DenseBlock", f"denseblock_param {{ numTransition: 3 growthRate: 2 "
                                    f"use_BC: {str(use_bc).lower()} }}")
    net = one_layer_net(text, {"data": (2, 3, 5, 4)}, seed=3, phase=phase)
    layer = net.layer_by_name("layer")
    count = layer.transitions
    # randomise draws the (1, C, 1, 1) statistics as weights: the running variances must be positive.
    variances = [*range(4 * count, 5 * count), *(range(9 * count, 10 * count) if use_bc else [])]
    for i in variances:
        layer.blobs[i].data[...] = np.abs(layer.blobs[i].data) + 0.5
    layer.blobs[-1].data[...] = factor
    return net


@pytest.mark.parametrize("use_bc", [False, True])
@pytest.mark.parametrize("factor", [0.0, 2.0])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_dense_block_test_phase(use_bc, factor, opset):
    model = assert_onnx_matches(_dense_block_net(use_bc, factor), opset)
    bottleneck = ["Conv", "BatchNormalization", "Relu"] if use_bc else []
    per_transition = ["BatchNormalization", "Relu", *bottleneck]
    assert op_types(model) == (per_transition + ["Conv", "Concat"]) * 3


def test_dense_block_in_train_is_refused():
    with pytest.raises(OnnxExportError, match="export the TEST net"):
        onnx_export.to_model(_dense_block_net(False, 0.0, caffe_pb2.TRAIN))
