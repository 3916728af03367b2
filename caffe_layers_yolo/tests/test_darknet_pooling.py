"""Pooling[darknet]: Chen's extra window (golden cases computed by BVLC Caffe on the input padded by hand),
which layers of which nets it takes, its gradient, and Chen's yolov3-tiny shape."""

import numpy as np
import pytest

from caffe_core import proto_io, registry
from caffe_core.blob import Blob
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

pytestmark = pytest.mark.requires_layer_types("Pooling")
DARKNET = "caffe-layers-yolo[darknet]"


def pool_text(kernel: int, stride: int, pad: int = 0, pool: str = "MAX") -> str:
    """A Pooling layer's text with this geometry."""
    return (f'name: "pool" type: "Pooling" bottom: "x" top: "y" '
            f'pooling_param {{ pool: {pool} kernel_size: {kernel} stride: {stride} pad: {pad} }}')


def net_of(*layers: str) -> caffe_pb2.NetParameter:
    """A net of an input x (1, 2, 13, 13) and these layers."""
    text = ('layer { name: "x" type: "Input" top: "x" '
            'input_param { shape { dim: 1 dim: 2 dim: 13 dim: 13 } } }')
    text += "".join(f" layer {{ {layer} }}" for layer in layers)
    return proto_io.parse_text(text, caffe_pb2.NetParameter())


# No upsample_param: these nets are only read, and without caffe-layers-seg the block would be refused.
UPSAMPLE = 'name: "up" type: "Upsample" bottom: "y" top: "z"'


@pytest.mark.parametrize("case", ["darknet_maxpool_k2s1", "darknet_maxpool_k3s2"])
def test_golden(golden_case, prefer_provider, case):
    prefer_provider("Pooling", DARKNET)
    assert check_layer_case(golden_case(case)) == []


def test_takes_darknets_size_2_stride_1_maxpool_in_a_net_with_an_upsample():
    net = net_of(pool_text(2, 1), UPSAMPLE)
    assert registry.layer_class_for(net.layer[1], net.layer).__name__ == "DarknetPoolingLayer"


@pytest.mark.parametrize("layer", [pool_text(2, 2), pool_text(3, 2), pool_text(2, 1, pad=1),
                                   pool_text(2, 1, pool="AVE"), pool_text(3, 1)])
def test_leaves_other_pools_of_such_a_net_to_bvlcs_pooling(layer):
    net = net_of(layer, UPSAMPLE)
    assert registry.layer_class_for(net.layer[1], net.layer).__name__ == "PoolingLayer"


def test_leaves_a_net_without_an_upsample_to_bvlcs_pooling():
    net = net_of(pool_text(2, 1))
    assert registry.layer_class_for(net.layer[1], net.layer).__name__ == "PoolingLayer"


@pytest.mark.requires_layer_types("Upsample")
def test_chens_yolov3_tiny_maxpool_keeps_13_by_13_where_bvlc_gives_12():
    darknet = Net(net_of(pool_text(2, 1), UPSAMPLE), phase=caffe_pb2.TEST)
    assert darknet.blob_by_name("y").shape == (1, 2, 13, 13)
    assert Net(net_of(pool_text(2, 1)), phase=caffe_pb2.TEST).blob_by_name("y").shape == (1, 2, 12, 12)


def test_the_last_window_holds_the_last_row_and_column_alone(make_layer, blob_of, prefer_provider):
    prefer_provider("Pooling", DARKNET)
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)[..., ::-1].copy()
    layer, bottom, top = make_layer(pool_text(2, 1)), [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    # Rows [3 2 1 0], [7 6 5 4], [11 10 9 8]: each window's max is its lower left element; the last
    # column's windows see one column, the last row's one row.
    assert top[0].data[0, 0].tolist() == [[7, 6, 5, 4], [11, 10, 9, 8], [11, 10, 9, 8]]


def test_gradient(make_layer, blob_of, prefer_provider):
    prefer_provider("Pooling", DARKNET)
    layer = make_layer(pool_text(2, 1))
    # Values 0.1 apart: no window holds a near tie for the finite differences to cross.
    x = np.random.default_rng(2).permutation(24).reshape(1, 2, 4, 3) * np.float32(0.1)
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [blob_of(x)], [Blob()])
