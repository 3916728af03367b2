"""ONNX export of the pack's activations: onnxruntime gives the layers' own outputs."""

import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()

NEWEST = newest_opset()


def _net(layer_type, params="", scale=1.0):
    net = one_layer_net(layer_text(layer_type, params, name="neuron"), {"data": (2, 3, 4, 5)})
    net.input_blobs[0].data[...] *= scale
    return net


@pytest.mark.parametrize(("params", "ops"), [
    ("", ["Clip"]),
    ("relu6_param { threshold: 3 }", ["Clip"]),
    ("relu6_param { negative_slope: 0.1 threshold: 4 }", ["LeakyRelu", "Min"]),
    ("relu6_param { threshold: -1 }", ["Relu", "Min"]),
])
def test_relu6(params, ops):
    model = assert_onnx_matches(_net("ReLU6", params, scale=8.0))
    assert op_types(model) == ops


@pytest.mark.parametrize(("opset", "ops"), [(13, ["HardSigmoid", "Mul"]), (17, ["HardSwish"]),
                                            (NEWEST, ["HardSwish"])])
def test_hard_swish(opset, ops):
    model = assert_onnx_matches(_net("HardSwish", scale=5.0), opset=opset)
    assert op_types(model) == ops


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize("params", ["", "hardsigmoid_param { alpha: 0.3 beta: 0.4 }"])
def test_hard_sigmoid(params, opset):
    model = assert_onnx_matches(_net("HardSigmoid", params, scale=4.0), opset=opset)
    assert op_types(model) == ["HardSigmoid"]


def test_in_place_activation():
    text = (layer_text("ReLU6", "relu6_param { threshold: 2 }", tops=("mid",), name="neuron")
            + layer_text("HardSwish", bottoms=("mid",), tops=("mid",), name="swish"))
    net = one_layer_net(text, {"data": (2, 3, 4, 5)})
    model = assert_onnx_matches(net)
    assert op_types(model) == ["Clip", "HardSwish"]
    assert [output.name for output in model.graph.output] == ["mid"]
