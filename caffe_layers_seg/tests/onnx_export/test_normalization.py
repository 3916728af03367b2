"""ONNX export of BN[pspnet], BN[segnet] and BatchNormKyle: onnxruntime gives the layers' own outputs, with
stored statistics and with the batch's."""

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)
from caffe_layers_seg.bn_pspnet import INVERSE_STD, PSPNetBNLayer
from caffe_layers_seg.bn_segnet import SegNetBNLayer

require_onnx()

NEWEST = newest_opset()


def _net(layer_type, params, shape=(2, 3, 4, 5), tops=("out",), phase=caffe_pb2.TEST):
    net = one_layer_net(layer_text(layer_type, params, tops=tops, name="bn"), {"data": shape}, 6, phase)
    if isinstance(net.layers[-1], PSPNetBNLayer):
        # The stored variances (or inverse stds) must be positive; randomise draws (1, C, 1, 1) blobs in +-1.
        statistic = net.layers[-1].blobs[3]
        statistic.data[...] = np.random.default_rng(7).uniform(0.5, 1.5, statistic.shape)
    return net


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize(("params", "phase", "shape"), [
    ("bn_param { eps: 0.001 }", caffe_pb2.TEST, (2, 3, 4, 5)),
    ("bn_param { frozen: true }", caffe_pb2.TRAIN, (2, 3, 4, 5)),
    ("", caffe_pb2.TEST, (4, 3)),
    ("bn_param { eps: 0.01 }", caffe_pb2.TRAIN, (2, 3, 4, 5)),
    ("", caffe_pb2.TRAIN, (3, 2, 5)),
])
def test_bn_pspnet(params, phase, shape, opset):
    net = _net("BN", params, shape, phase=phase)
    assert isinstance(net.layers[-1], PSPNetBNLayer)
    model = assert_onnx_matches(net, opset)
    assert ("ReduceMean" in op_types(model)) == (phase == caffe_pb2.TRAIN and "frozen" not in params)


def test_bn_pspnet_with_stored_inverse_std():
    net = _net("BN", "")
    net.layers[-1].statistics = INVERSE_STD
    assert_onnx_matches(net)


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize(("mode", "tops", "shape"), [
    ("INFERENCE", ("out",), (2, 3, 4, 5)),
    ("LEARN", ("out",), (2, 3, 4, 5)),
    ("LEARN", ("out", "mean", "variance"), (2, 3, 4, 5)),
    ("LEARN", ("out", "mean"), (5, 3)),
])
def test_bn_segnet(mode, tops, shape, opset):
    net = _net("BN", f"bn_param {{ bn_mode: {mode} }}", shape, tops)
    assert isinstance(net.layers[-1], SegNetBNLayer)
    model = assert_onnx_matches(net, opset)
    assert sorted(output.name for output in model.graph.output) == sorted(tops)


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize(("params", "phase", "shape"), [
    ("", caffe_pb2.TEST, (2, 3, 4, 5)),
    ("use_alpha_beta: true eps: 0.01", caffe_pb2.TEST, (2, 3, 4, 5)),
    ("use_global_stats: false", caffe_pb2.TEST, (2, 3, 4, 5)),
    ("use_alpha_beta: true", caffe_pb2.TRAIN, (3, 4)),
    ("use_global_stats: true", caffe_pb2.TRAIN, (2, 3, 2, 2, 2)),
    ("", caffe_pb2.TEST, (6,)),
])
def test_batch_norm_kyle(params, phase, shape, opset):
    net = _net("BatchNormKyle", f"batch_norm_param {{ {params} }}", shape, phase=phase)
    model = assert_onnx_matches(net, opset)
    assert ("ReduceMean" in op_types(model)) == (not net.layers[-1].use_global_stats)


def test_batch_norm_kyle_with_a_zero_scale_factor():
    net = _net("BatchNormKyle", "batch_norm_param { eps: 0.5 }")
    net.layers[-1].blobs[2].data[...] = 0
    assert_onnx_matches(net)
