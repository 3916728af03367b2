"""The core's Split layer: Caffe's golden split case and its gradient (bottom diff = sum of top diffs)."""

import pathlib

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layers.split import SplitLayer
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

GOLDEN = pathlib.Path(__file__).parent / "golden"


def test_golden():
    assert check_layer_case(GOLDEN / "split") == []


def test_gradient():
    bottom = Blob((2, 3, 4))
    bottom.data[...] = np.random.default_rng(0).normal(size=(2, 3, 4))
    layer = SplitLayer(caffe_pb2.LayerParameter(name="split", type="Split"))
    GradientChecker(1e-2, 1e-2).check_gradient_eltwise(layer, [bottom], [Blob(), Blob()])


def test_tops_share_the_bottom_data():
    bottom, tops = Blob((3,)), [Blob(), Blob()]
    layer = SplitLayer(caffe_pb2.LayerParameter(name="split", type="Split"))
    layer.setup([bottom], tops)
    bottom.data[...] = [1, 2, 3]
    assert all(t.data_memory is bottom.data_memory for t in tops)
