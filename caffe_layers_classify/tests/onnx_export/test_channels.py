"""ONNX export of Axpy, ShuffleChannel and Unsqueeze: onnxruntime gives the layers' own outputs."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    input_layer,
    net_from_text,
    newest_opset,
    randomise,
)


def _matches(text, opset=None):
    net = net_from_text(text)
    randomise(net, np.random.default_rng(1))
    return assert_onnx_matches(net, opset=opset)


@pytest.mark.parametrize(("scale_shape", "x_shape"), [
    ((2, 3, 1, 1), (2, 3, 4, 5)),
    ((2, 3), (2, 3, 4, 5)),
    ((2, 3), (2, 3)),
])
def test_axpy(scale_shape, x_shape):
    text = (input_layer("a", scale_shape) + input_layer("x", x_shape) + input_layer("y", x_shape)
            + 'layer { name: "axpy" type: "Axpy" bottom: "a" bottom: "x" bottom: "y" top: "out" }')
    _matches(text)


@pytest.mark.parametrize(("shape", "group"), [((2, 6, 3, 4), 2), ((2, 6, 3, 4), 3), ((2, 12), 4),
                                              ((2, 6, 5), 6), ((1, 4, 2, 2), 1)])
def test_shuffle_channel(shape, group):
    text = input_layer("data", shape) + (f'layer {{ name: "shuffle" type: "ShuffleChannel" bottom: "data" '
                                    f'top: "out" shuffle_channel_param {{ group: {group} }} }}')
    _matches(text)


@pytest.mark.parametrize("opset", [13, newest_opset()])
@pytest.mark.parametrize("dim", [0, 2, 4, -1, -5, -3])
def test_unsqueeze(dim, opset):
    text = input_layer("data", (2, 3, 4, 5)) + ('layer { name: "u" type: "Unsqueeze" bottom: "data" '
                                                f'top: "out" unsqueeze_param {{ dim: {dim} }} }}')
    _matches(text, opset)
