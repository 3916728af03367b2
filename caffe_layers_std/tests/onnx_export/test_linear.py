"""ONNX export of InnerProduct, Embed, Scale and Bias: onnxruntime gives the layer's own outputs."""

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


def layer_net(type_name, params, shape=(2, 3, 4, 5), operand_shape=None, seed=0):
    """Input(s) and one layer, with random weights and inputs; a second bottom when operand_shape is given."""
    inputs = {"data": shape} if operand_shape is None else {"data": shape, "operand": operand_shape}
    return one_layer_net(layer_text(type_name, params, list(inputs)), inputs, seed)


@pytest.mark.parametrize("shape, params, ops", [
    ((2, 3, 4, 5), "num_output: 7", ["Reshape", "Gemm"]),
    ((6, 10), "num_output: 7", ["Gemm"]),
    ((6, 10), "num_output: 7 bias_term: false", ["Gemm"]),
    ((6, 10), "num_output: 7 transpose: true", ["Gemm"]),
    ((2, 3, 4, 5), "num_output: 7 axis: 2 transpose: true", ["Reshape", "Gemm", "Reshape"]),
    ((2, 3, 4), "num_output: 5 axis: -1 bias_term: false", ["Reshape", "Gemm", "Reshape"]),
    ((2, 3, 4), "num_output: 5 axis: 0", ["Reshape", "Gemm", "Reshape"]),
])
def test_inner_product(shape, params, ops):
    net = layer_net("InnerProduct", f"inner_product_param {{ {params} }}", shape)
    model = assert_onnx_matches(net)
    assert op_types(model) == ops


@pytest.mark.parametrize("bias_term", ["true", "false"])
def test_embed(bias_term):
    net = layer_net("Embed", f"embed_param {{ num_output: 4 input_dim: 6 bias_term: {bias_term} }}", (3, 5))
    net.blob_by_name("data").data[...] = np.random.default_rng(2).integers(0, 6, (3, 5))
    assert_onnx_matches(net)
    assert net.blob_by_name("out").shape == (3, 5, 4)


@pytest.mark.parametrize("params", [
    "",
    "scale_param { bias_term: true }",
    "scale_param { axis: 1 num_axes: 2 bias_term: true }",
    "scale_param { axis: 0 num_axes: -1 }",
    "scale_param { axis: -2 num_axes: 2 }",
    "scale_param { num_axes: 0 bias_term: true }",
])
def test_scale_learned(params):
    assert_onnx_matches(layer_net("Scale", params))


@pytest.mark.parametrize("operand_shape, params", [
    ((3,), ""),
    ((3, 4), "scale_param { bias_term: true }"),
    ((4, 5), "scale_param { axis: 2 }"),
    ((2, 3, 4, 5), "scale_param { axis: 0 bias_term: true }"),
    ((), ""),
])
def test_scale_by_second_bottom(operand_shape, params):
    assert_onnx_matches(layer_net("Scale", params, operand_shape=operand_shape))


@pytest.mark.parametrize("params", ["", "bias_param { axis: 1 num_axes: 2 }", "bias_param { num_axes: 0 }",
                                    "bias_param { axis: -1 num_axes: 1 }"])
def test_bias_learned(params):
    assert_onnx_matches(layer_net("Bias", params))


@pytest.mark.parametrize("operand_shape, params", [((3, 4), ""), ((5,), "bias_param { axis: -1 }")])
def test_bias_by_second_bottom(operand_shape, params):
    model = assert_onnx_matches(layer_net("Bias", params, operand_shape=operand_shape))
    assert op_types(model)[-1] == "Add"
