"""Layer: the base class's setup bookkeeping and forward loss, as Caffe's layer.hpp."""

import pytest

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


class TwoTops(Layer):
    type = "TestTwoTops"

    def layer_setup(self, bottom, top):
        self.blobs = [Blob((2,))]
        self.set_param_propagate_down(0, False)

    def reshape(self, bottom, top):
        for blob in top:
            blob.reshape((2,))

    def forward_cpu(self, bottom, top):
        top[0].mutable_cpu_data()[...] = [1.0, 2.0]
        top[1].mutable_cpu_data()[...] = [3.0, 4.0]


def test_forward_sums_the_weighted_loss_of_every_top():
    # Layer::Forward: loss += dot(top data, top diff), the diff holding each top's loss weight.
    layer = TwoTops(caffe_pb2.LayerParameter(name="t", type="TestTwoTops", loss_weight=[1.0, 0.5]))
    top = [Blob(), Blob()]
    layer.setup([], top)
    assert layer.forward([], top) == pytest.approx(1 * (1 + 2) + 0.5 * (3 + 4))


def test_setup_gives_each_param_blob_one_propagate_down_flag():
    # LayerSetUp's param_propagate_down_.resize(blobs_.size(), true): one flag per learnable blob.
    layer = TwoTops(caffe_pb2.LayerParameter(name="t", type="TestTwoTops"))
    layer.setup([], [Blob(), Blob()])
    assert not layer.param_propagate_down(0)
    assert not layer.param_propagate_down(1)


def test_a_layer_without_forward_says_so():
    class NoForward(Layer):
        type = "TestNoForward"

        def reshape(self, bottom, top):
            pass

    layer = NoForward(caffe_pb2.LayerParameter(name="n", type="TestNoForward"))
    with pytest.raises(NotImplementedError, match="NoForward implements neither forward_cpu nor forward_on"):
        layer.forward_cpu([], [])
