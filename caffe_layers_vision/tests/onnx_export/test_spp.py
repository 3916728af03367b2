"""ONNX export of SPP: each level's pooling, flattened and concatenated."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core import onnx_export
from caffe_core.testing.onnx_check import assert_onnx_matches, net_from_text, newest_opset, randomise

NET = """
layer {{ name: "data" type: "Input" top: "data"
        input_param {{ shape {{ dim: 2 dim: 3 dim: {h} dim: {w} }} }} }}
layer {{ name: "spp" type: "SPP" bottom: "data" top: "out" spp_param {{ {params} }} }}
"""


def spp_net(height: int, width: int, params: str):
    """A net of one SPP layer on a random (2, 3, height, width) input."""
    net = net_from_text(NET.format(h=height, w=width, params=params))
    randomise(net, np.random.default_rng(height * 10 + width))
    return net


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
