"""ONNX export of BatchNorm, MVN and Softmax: onnxruntime gives the layer's own outputs."""

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    input_layer,
    layer_text,
    net_from_text,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()


def layer_net(type_name, params="", shape=(2, 3, 4, 5), phase=caffe_pb2.TEST, seed=0):
    """An Input and one layer, with random weights (statistics) and inputs."""
    return one_layer_net(layer_text(type_name, params), {"data": shape}, seed, phase)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (6,), (2, 3, 5)])
@pytest.mark.parametrize("params", ["", "batch_norm_param { eps: 0.01 }"])
def test_batch_norm_global_statistics(shape, params):
    net = layer_net("BatchNorm", params, shape)
    net.layer_by_name("layer").blobs[2].data[...] = 2.5
    model = assert_onnx_matches(net)
    assert op_types(model) == ["BatchNormalization"]


def test_batch_norm_zero_scale_factor_zeroes_the_statistics():
    net = layer_net("BatchNorm", "batch_norm_param { eps: 0.25 }")
    net.layer_by_name("layer").blobs[2].data[...] = 0
    assert_onnx_matches(net)
    np.testing.assert_allclose(net.blob_by_name("out").data, net.blob_by_name("data").data / 0.5, rtol=1e-6)


def test_batch_norm_legacy_shaped_statistics():
    """Caffe reads the scale factor as blobs[2]'s first value, whatever its shape (here legacy 4-D blobs)."""
    blobs = ('blobs { num: 1 channels: 1 height: 1 width: 3 data: 2 data: 4 data: 6 } '
             'blobs { num: 1 channels: 1 height: 1 width: 3 data: 8 data: 2 data: 0.5 } '
             'blobs { num: 1 channels: 1 height: 1 width: 1 data: 2 }')
    layer = layer_text("BatchNorm", f"batch_norm_param {{ eps: 0 }} {blobs}")
    net = net_from_text(input_layer("data", (2, 3)) + layer)
    net.blob_by_name("data").data[...] = [[1, 2, 3], [5, 4, 2]]
    model = assert_onnx_matches(net)
    assert op_types(model) == ["BatchNormalization"]
    np.testing.assert_allclose(net.blob_by_name("out").data, [[0, 0, 0], [2, 2, -2]], rtol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3)])
def test_batch_norm_batch_statistics(shape, opset):
    net = layer_net("BatchNorm", "batch_norm_param { use_global_stats: false }", shape)
    model = assert_onnx_matches(net, opset=opset)
    assert "BatchNormalization" not in op_types(model)


def test_batch_norm_in_train_uses_batch_statistics():
    assert_onnx_matches(layer_net("BatchNorm", "batch_norm_param { eps: 0.001 }", phase=caffe_pb2.TRAIN))


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 5)])
@pytest.mark.parametrize("params", ["", "mvn_param { across_channels: true }",
                                    "mvn_param { normalize_variance: false }",
                                    "mvn_param { across_channels: true normalize_variance: false }",
                                    "mvn_param { eps: 0.1 }"])
def test_mvn(shape, params):
    net = layer_net("MVN", params, shape)
    assert_onnx_matches(net)
    assert net.blob_by_name("out").num_axes == 4


def test_mvn_at_each_opset(opset):
    assert_onnx_matches(layer_net("MVN", "mvn_param { across_channels: true }"), opset=opset)


@pytest.mark.parametrize("params", ["", "softmax_param { axis: -1 }", "softmax_param { axis: 2 }",
                                    "softmax_param { axis: 0 }"])
def test_softmax(params, opset):
    net = layer_net("Softmax", params)
    net.blob_by_name("data").data[...] *= 20
    model = assert_onnx_matches(net, opset=opset)
    assert op_types(model) == ["Softmax"]
