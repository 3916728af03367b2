"""ONNX export of the neuron layers: onnxruntime gives the layer's own outputs."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    net_from_text,
    one_layer_net,
    op_types,
    randomise,
    require_onnx,
)

require_onnx()


def neuron_net(type_name, params="", shape=(2, 3, 4, 5), scale=1.0, phase=caffe_pb2.TEST, seed=0):
    """A net of one neuron layer on random input in [-scale, scale]."""
    net = one_layer_net(layer_text(type_name, params, name="neuron"), {"data": shape}, seed, phase)
    net.blob_by_name("data").data[...] *= scale
    return net


@pytest.mark.parametrize("params", ["", "relu_param { negative_slope: 0.1 }"])
def test_relu(params):
    model = assert_onnx_matches(neuron_net("ReLU", params))
    assert op_types(model) == ["LeakyRelu" if params else "Relu"]


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 5)])
@pytest.mark.parametrize("params", ["", "prelu_param { channel_shared: true }"])
def test_prelu(shape, params):
    model = assert_onnx_matches(neuron_net("PReLU", params, shape))
    assert op_types(model) == ["PRelu"]


def test_in_place_prelu_and_swish():
    text = """
    layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 } } }
    layer { name: "tanh" type: "TanH" bottom: "data" top: "out" }
    layer { name: "prelu" type: "PReLU" bottom: "out" top: "out" }
    layer { name: "swish" type: "Swish" bottom: "out" top: "out" swish_param { beta: 2 } }
    """
    net = net_from_text(text)
    randomise(net, np.random.default_rng(1))
    model = assert_onnx_matches(net)
    assert op_types(model) == ["Tanh", "PRelu", "Mul", "Sigmoid", "Mul"]


@pytest.mark.parametrize("params", ["", "elu_param { alpha: 0.3 }"])
def test_elu(params):
    assert_onnx_matches(neuron_net("ELU", params, scale=3.0))


@pytest.mark.parametrize("type_name", ["Sigmoid", "TanH", "AbsVal"])
def test_parameterless(type_name):
    model = assert_onnx_matches(neuron_net(type_name, scale=4.0))
    assert op_types(model) == [{"Sigmoid": "Sigmoid", "TanH": "Tanh", "AbsVal": "Abs"}[type_name]]


def test_bnll_is_stable_for_large_inputs():
    model = assert_onnx_matches(neuron_net("BNLL", scale=60.0))
    assert op_types(model) == ["Softplus"]


@pytest.mark.parametrize("params, ops", [
    ("power: 1.5 scale: 0.5 shift: 2", ["Mul", "Add", "Pow"]),
    ("power: 2 scale: -1.5 shift: 0.3", ["Mul", "Add", "Pow"]),
    ("power: 3", ["Pow"]),
    ("power: 1 scale: 2 shift: -1", ["Mul", "Add"]),
    ("", ["Identity"]),
    ("power: 0 scale: 3 shift: 2", ["Expand"]),
    ("power: 3 scale: 0 shift: 2", ["Expand"]),
])
def test_power(params, ops):
    net = neuron_net("Power", f"power_param {{ {params} }}")
    model = assert_onnx_matches(net)
    assert op_types(model) == ops


def test_power_constant_is_shift_to_the_power():
    net = neuron_net("Power", "power_param { power: 3 scale: 0 shift: 2 }")
    assert_onnx_matches(net)
    np.testing.assert_array_equal(net.blob_by_name("out").data, 8.0)


@pytest.mark.parametrize("params", ["", "exp_param { base: 2 scale: 0.5 shift: 1 }",
                                    "exp_param { base: -1 scale: -1.5 shift: 0.5 }"])
def test_exp(params):
    assert_onnx_matches(neuron_net("Exp", params, scale=2.0))


@pytest.mark.parametrize("params", ["log_param { shift: 2 }", "log_param { base: 10 scale: 0.5 shift: 1.5 }",
                                    "log_param { base: 2 scale: -3 shift: 3.5 }"])
def test_log(params):
    assert_onnx_matches(neuron_net("Log", params))


@pytest.mark.parametrize("params", ["", "threshold_param { threshold: 0.2 }"])
def test_threshold(params):
    net = neuron_net("Threshold", params)
    assert_onnx_matches(net)
    assert 0 < net.blob_by_name("out").data.mean() < 1


@pytest.mark.parametrize("params, ops", [("clip_param { min: -0.5 max: 0.3 }", ["Clip"]),
                                         ("clip_param { min: 0.4 max: -0.2 }", ["Min", "Max"])])
def test_clip(params, ops):
    model = assert_onnx_matches(neuron_net("Clip", params))
    assert op_types(model) == ops


@pytest.mark.parametrize("params", ["", "swish_param { beta: 2.5 }"])
def test_swish(params):
    assert_onnx_matches(neuron_net("Swish", params, scale=4.0))


def test_dropout_is_identity_in_test():
    model = assert_onnx_matches(neuron_net("Dropout", "dropout_param { dropout_ratio: 0.3 }"))
    assert op_types(model) == ["Identity"]


def test_dropout_in_train_is_refused():
    from caffe_core import onnx_export

    net = neuron_net("Dropout", phase=caffe_pb2.TRAIN)
    with pytest.raises(OnnxExportError, match=r"layer 'neuron' \(Dropout\): a TRAIN-phase Dropout"):
        onnx_export.to_model(net)


@pytest.mark.parametrize("type_name, params", [("PReLU", ""), ("Power", "power_param { power: 2 shift: 1 }"),
                                               ("Clip", "clip_param { min: -0.5 max: 0.3 }")])
def test_at_each_opset(type_name, params, opset):
    assert_onnx_matches(neuron_net(type_name, params), opset=opset)
