"""ONNX export of Eltwise, Reduction and ArgMax: onnxruntime gives the layer's own outputs."""

import numpy as np
import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()


def layer_net(type_name, params, shape=(2, 3, 4, 5), num_bottoms=1, seed=0):
    """num_bottoms Inputs of one shape and one layer on them, with random inputs."""
    names = [f"in{i}" for i in range(num_bottoms)]
    return one_layer_net(layer_text(type_name, params, names), dict.fromkeys(names, shape), seed)


@pytest.mark.parametrize("params, ops", [
    ("", ["Add", "Add"]),
    ("eltwise_param { operation: SUM coeff: 1 coeff: -0.5 coeff: 2 }", ["Mul", "Mul", "Add", "Add"]),
    ("eltwise_param { operation: PROD }", ["Mul", "Mul"]),
    ("eltwise_param { operation: MAX }", ["Max"]),
])
def test_eltwise(params, ops):
    model = assert_onnx_matches(layer_net("Eltwise", params, num_bottoms=3))
    assert op_types(model) == ops


@pytest.mark.parametrize("operation", ["SUM", "ASUM", "SUMSQ", "MEAN"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reduction(operation, axis):
    net = layer_net("Reduction", f"reduction_param {{ operation: {operation} axis: {axis} coeff: -1.5 }}")
    assert_onnx_matches(net)
    assert net.blob_by_name("out").shape == (2, 3, 4, 5)[:axis % 4]


@pytest.mark.parametrize("operation", ["SUM", "ASUM", "SUMSQ", "MEAN"])
def test_reduction_at_each_opset(operation, opset):
    assert_onnx_matches(layer_net("Reduction", f"reduction_param {{ operation: {operation} axis: 2 }}"),
                        opset=opset)


ARGMAX_PARAMS = [
    "",
    "argmax_param { top_k: 3 }",
    "argmax_param { out_max_val: true }",
    "argmax_param { out_max_val: true top_k: 4 }",
    "argmax_param { axis: 1 }",
    "argmax_param { axis: -1 top_k: 2 }",
    "argmax_param { axis: 2 top_k: 3 out_max_val: true }",
    "argmax_param { axis: 0 out_max_val: true }",
]


@pytest.mark.parametrize("shape, params", [((2, 3, 4, 5), params) for params in ARGMAX_PARAMS] +
                         [((3, 5), params) for params in ARGMAX_PARAMS if "axis: 2" not in params])
def test_argmax(shape, params):
    net = layer_net("ArgMax", params, shape)
    assert_onnx_matches(net)


@pytest.mark.parametrize("params", ARGMAX_PARAMS)
def test_argmax_ties_go_to_the_larger_index(params):
    net = layer_net("ArgMax", params)
    net.blob_by_name("in0").data[...] = np.random.default_rng(3).integers(0, 3, (2, 3, 4, 5))
    assert_onnx_matches(net)


def test_argmax_at_each_opset(opset):
    assert_onnx_matches(layer_net("ArgMax", "argmax_param { out_max_val: true top_k: 2 }"), opset=opset)
