"""ONNX export of Crop: a static Slice of bottom 0 to bottom 1's shape."""

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

from caffe_core import onnx_export


def crop_text(params: str) -> str:
    """A Crop of "data" to the shape of "like" with this crop_param text."""
    return layer_text("Crop", f"crop_param {{ {params} }}", ("data", "like"), name="crop")


def crop_net(like: tuple[int, ...], params: str):
    """A net cropping a random (2, 4, 7, 9) input to the shape `like` with this crop_param text."""
    return one_layer_net(crop_text(params), {"data": (2, 4, 7, 9), "like": like})


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
    assert op_types(model) == ["Slice"]


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
def test_opsets(opset):
    assert_onnx_matches(crop_net((2, 3, 4, 5), "axis: 1 offset: 1 offset: 2 offset: 3"), opset)


def test_unnamed_layer():
    """A layer's name is optional in Caffe: the starts, ends and axes of an unnamed Crop still get names."""
    text = crop_text("axis: 1 offset: 1 offset: 2 offset: 3").replace('name: "crop" ', "")
    net = one_layer_net(text, {"data": (2, 4, 7, 9), "like": (2, 3, 5, 6)})
    model = assert_onnx_matches(net)
    names = [initializer.name for initializer in model.graph.initializer]
    assert all(names) and len(set(names)) == len(names)
