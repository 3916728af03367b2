"""ONNX export of LRN: across channels as ONNX's LRN, within each channel from AveragePool and Pow."""

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


def lrn_net(params: str):
    """A net of one LRN layer with this lrn_param text, on a random (2, 7, 5, 6) input scaled to [-3, 3]."""
    net = one_layer_net(layer_text("LRN", f"lrn_param {{ {params} }}", name="lrn"), {"data": (2, 7, 5, 6)})
    net.input_blobs[0].data[...] *= 3
    return net


@pytest.mark.parametrize("params", [
    "",
    "local_size: 3 alpha: 0.5 beta: 0.6 k: 2",
    "local_size: 1 alpha: 2 beta: 1.5",
    "local_size: 9 alpha: 0.3",
])
def test_across_channels(params):
    model = assert_onnx_matches(lrn_net(params))
    assert op_types(model) == ["LRN"]


@pytest.mark.parametrize("params", [
    "local_size: 3",
    "local_size: 5 alpha: 0.5 beta: 0.6 k: 2",
    "local_size: 7 alpha: 2 beta: 1.5",
    "local_size: 1 alpha: 0.3",
])
def test_within_channel(params):
    assert_onnx_matches(lrn_net(f"norm_region: WITHIN_CHANNEL {params}"))


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
@pytest.mark.parametrize("region", ["ACROSS_CHANNELS", "WITHIN_CHANNEL"])
def test_opsets(region, opset):
    assert_onnx_matches(lrn_net(f"norm_region: {region} local_size: 3 alpha: 0.5"), opset)


@pytest.mark.parametrize("region", ["ACROSS_CHANNELS", "WITHIN_CHANNEL"])
def test_unnamed_layer(region):
    """A layer's name is optional in Caffe: the constants of an unnamed one still get names of their own."""
    text = layer_text("LRN", f"lrn_param {{ norm_region: {region} local_size: 3 alpha: 0.5 beta: 0.6 }}")
    net = one_layer_net(text.replace('name: "layer" ', ""), {"data": (2, 7, 5, 6)})
    model = assert_onnx_matches(net)
    names = [initializer.name for initializer in model.graph.initializer]
    assert all(names) and len(set(names)) == len(names)
