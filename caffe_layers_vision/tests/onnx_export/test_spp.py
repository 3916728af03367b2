"""ONNX export of SPP: each level's pooling, flattened and concatenated."""

import numpy as np
import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export


def spp_net(height: int, width: int, params: str):
    """A net of one SPP layer on a random (2, 3, height, width) input."""
    layer = layer_text("SPP", f"spp_param {{ {params} }}", name="spp")
    return one_layer_net(layer, {"data": (2, 3, height, width)}, height * 10 + width)


@pytest.mark.parametrize("pool", ["MAX", "AVE"])
@pytest.mark.parametrize(("height", "width", "pyramid"), [
    (9, 8, 3), (2, 4, 2), (9, 8, 1), (13, 13, 3), (7, 12, 2),
])
def test_spp(height, width, pyramid, pool):
    assert_onnx_matches(spp_net(height, width, f"pyramid_height: {pyramid} pool: {pool}"))


def test_stochastic():
    net = spp_net(8, 8, "pyramid_height: 3 pool: STOCHASTIC")
    net.input_blobs[0].data[...] = np.abs(net.input_blobs[0].data) + 0.1
    assert_onnx_matches(net)


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
def test_opsets(opset):
    assert_onnx_matches(spp_net(9, 8, "pyramid_height: 3 pool: AVE"), opset)
