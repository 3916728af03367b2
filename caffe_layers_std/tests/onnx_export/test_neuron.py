"""ONNX export of the neuron layers: onnxruntime gives the layer's own outputs."""

import numpy as np
import pytest

from caffe_core.testing.onnx_check import assert_onnx_matches, net_from_text, randomise

pytest.importorskip("onnxruntime")

NET = """
layer {{ name: "data" type: "Input" top: "data" input_param {{ shape {{ dim: 2 dim: 3 dim: 4 dim: 5 }} }} }}
layer {{ name: "neuron" type: "{type}" bottom: "data" top: "out" {params} }}
"""


@pytest.mark.parametrize("params", ["", "relu_param { negative_slope: 0.1 }"])
def test_relu(params):
    net = net_from_text(NET.format(type="ReLU", params=params))
    randomise(net, np.random.default_rng(0))
    model = assert_onnx_matches(net)
    assert [node.op_type for node in model.graph.node] == ["LeakyRelu" if params else "Relu"]
