"""ONNX export of Crop: a static Slice of bottom 0 to bottom 1's shape."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core import onnx_export
from caffe_core.testing.onnx_check import assert_onnx_matches, net_from_text, newest_opset, randomise

NET = """
layer {{ name: "data" type: "Input" top: "data" top: "like"
        input_param {{ shape {{ dim: 2 dim: 4 dim: 7 dim: 9 }} shape {{ {like} }} }} }}
layer {{ name: "crop" type: "Crop" bottom: "data" bottom: "like" top: "out" crop_param {{ {params} }} }}
"""


def crop_net(like: tuple[int, ...], params: str):
    """A net cropping a random (2, 4, 7, 9) input to the shape `like` with this crop_param text."""
    dims = " ".join(f"dim: {size}" for size in like)
    net = net_from_text(NET.format(like=dims, params=params))
    randomise(net, np.random.default_rng(0))
    return net


@pytest.mark.parametrize(("like", "params"), [
    ((2, 4, 5, 6), ""),
    ((2, 4, 5, 6), "offset: 1"),
    ((2, 4, 5, 6), "offset: 2 offset: 3"),
    ((1, 3, 5, 6), "axis: 1 offset: 1 offset: 1 offset: 2"),
    ((1, 3, 5, 6), "axis: 0 offset: 1"),
    ((2, 4, 7, 4), "axis: -1 offset: 5"),
    ((2, 4, 7, 9), "axis: 2"),
])
def test_crop(like, params):
    model = assert_onnx_matches(crop_net(like, params))
    assert [node.op_type for node in model.graph.node] == ["Slice"]


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
def test_opsets(opset):
    assert_onnx_matches(crop_net((2, 3, 4, 5), "axis: 1 offset: 1 offset: 2 offset: 3"), opset)


def test_unnamed_layer():
    """A layer's name is optional in Caffe: the starts, ends and axes of an unnamed Crop still get names."""
    text = NET.format(like="dim: 2 dim: 3 dim: 5 dim: 6", params="axis: 1 offset: 1 offset: 2 offset: 3")
    net = net_from_text(text.replace('name: "crop" ', ""))
    randomise(net, np.random.default_rng(0))
    model = assert_onnx_matches(net)
    names = [initializer.name for initializer in model.graph.initializer]
    assert all(names) and len(set(names)) == len(names)
