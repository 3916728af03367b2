"""ONNX export of Axpy, ShuffleChannel and Unsqueeze: onnxruntime gives the layers' own outputs."""

import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    require_onnx,
)

require_onnx()


def _matches(layer, inputs, opset=None):
    return assert_onnx_matches(one_layer_net(layer, inputs, 1), opset=opset)


@pytest.mark.parametrize(("scale_shape", "x_shape"), [
    ((2, 3, 1, 1), (2, 3, 4, 5)),
    ((2, 3), (2, 3, 4, 5)),
    ((2, 3), (2, 3)),
])
def test_axpy(scale_shape, x_shape):
    inputs = {"a": scale_shape, "x": x_shape, "y": x_shape}
    _matches(layer_text("Axpy", "", list(inputs), name="axpy"), inputs)


@pytest.mark.parametrize(("shape", "group"), [((2, 6, 3, 4), 2), ((2, 6, 3, 4), 3), ((2, 12), 4),
                                              ((2, 6, 5), 6), ((1, 4, 2, 2), 1)])
def test_shuffle_channel(shape, group):
    _matches(layer_text("ShuffleChannel", f"shuffle_channel_param {{ group: {group} }}", name="shuffle"),
             {"data": shape})


@pytest.mark.parametrize("opset", [13, newest_opset()])
@pytest.mark.parametrize("dim", [0, 2, 4, -1, -5, -3])
def test_unsqueeze(dim, opset):
    layer = layer_text("Unsqueeze", f"unsqueeze_param {{ dim: {dim} }}", name="u")
    _matches(layer, {"data": (2, 3, 4, 5)}, opset)
