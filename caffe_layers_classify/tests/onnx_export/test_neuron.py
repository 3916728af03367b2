"""ONNX export of the pack's activations: onnxruntime gives the layers' own outputs."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core.testing.onnx_check import assert_onnx_matches, net_from_text, newest_opset, randomise

NEWEST = newest_opset()
NET = """
layer {{ name: "data" type: "Input" top: "data" input_param {{ shape {{ dim: 2 dim: 3 dim: 4 dim: 5 }} }} }}
layer {{ name: "neuron" type: "{type}" bottom: "data" top: "{top}" {params} }}
"""


def _net(layer_type, params="", scale=1.0):
    net = net_from_text(NET.format(type=layer_type, params=params, top="out"))
    randomise(net, np.random.default_rng(0))
    net.input_blobs[0].data[...] *= scale
    return net


def _ops(model):
    return [node.op_type for node in model.graph.node]


@pytest.mark.parametrize(("params", "ops"), [
    ("", ["Clip"]),
    ("relu6_param { threshold: 3 }", ["Clip"]),
    ("relu6_param { negative_slope: 0.1 threshold: 4 }", ["LeakyRelu", "Min"]),
    ("relu6_param { threshold: -1 }", ["Relu", "Min"]),
])
def test_relu6(params, ops):
    model = assert_onnx_matches(_net("ReLU6", params, scale=8.0))
    assert _ops(model) == ops


@pytest.mark.parametrize(("opset", "ops"), [(13, ["HardSigmoid", "Mul"]), (17, ["HardSwish"]),
                                            (NEWEST, ["HardSwish"])])
def test_hard_swish(opset, ops):
    model = assert_onnx_matches(_net("HardSwish", scale=5.0), opset=opset)
    assert _ops(model) == ops


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize("params", ["", "hardsigmoid_param { alpha: 0.3 beta: 0.4 }"])
def test_hard_sigmoid(params, opset):
    model = assert_onnx_matches(_net("HardSigmoid", params, scale=4.0), opset=opset)
    assert _ops(model) == ["HardSigmoid"]


def test_in_place_activation():
    text = NET.format(type="ReLU6", params="relu6_param { threshold: 2 }", top="mid") + (
        'layer { name: "swish" type: "HardSwish" bottom: "mid" top: "mid" }')
    net = net_from_text(text)
    randomise(net, np.random.default_rng(0))
    model = assert_onnx_matches(net)
    assert _ops(model) == ["Clip", "HardSwish"]
    assert [output.name for output in model.graph.output] == ["mid"]
