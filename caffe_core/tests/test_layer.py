"""Layer: the base class's setup bookkeeping and forward loss, as Caffe's layer.hpp."""

import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import EVERY_BOTTOM, Layer
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


class FourAxes(Layer):
    type = "TestFourAxes"
    bottom_num_axes = {0: 4, 1: (0, 4)}

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])

    def forward_cpu(self, bottom, top):
        top[0].mutable_cpu_data()[...] = bottom[0].cpu_data()


class TwoToFourAxes(FourAxes):
    bottom_num_axes = {0: (2, 4)}


class FourAxesThenAnyBottomTwo(FourAxes):
    bottom_num_axes = {0: 4, EVERY_BOTTOM: 2}


class FourAxesOwnReshape(FourAxes):
    def reshape(self, bottom, top):
        top[0].reshape(bottom[0].shape[:2])


def four_axes(cls=FourAxes):
    return cls(caffe_pb2.LayerParameter(name="f", type="TestFourAxes"))


@pytest.mark.parametrize(("cls", "shapes", "message"), [
    (FourAxes, [(2, 3, 4)],
     r"layer 'f' \(type TestFourAxes\): bottom 0 must have 4 axes, got shape \[2, 3, 4\]$"),
    (FourAxes, [(2, 3, 4, 5), (1, 1, 1, 1, 1)],
     r"bottom 1 must have at most 4 axes, got shape \[1, 1, 1, 1, 1\]$"),
    (TwoToFourAxes, [(6,)], r"bottom 0 must have 2 to 4 axes, got shape \[6\]$"),
    (FourAxesThenAnyBottomTwo, [(2, 3, 4, 5), (1, 2), (1, 2, 3)], r"bottom 2 must have 2 axes, got shape"),
    (FourAxesThenAnyBottomTwo, [(2, 3, 4)], "bottom 0 must have 4 axes"),
    (FourAxesOwnReshape, [(2, 3)], "bottom 0 must have 4 axes"),
])
def test_setup_refuses_bottoms_with_other_numbers_of_axes(cls, shapes, message):
    with pytest.raises(LayerSetupError, match=message):
        four_axes(cls).setup([Blob(shape) for shape in shapes], [Blob()])


def test_an_absent_optional_bottom_is_not_checked():
    top = Blob()
    four_axes().setup([Blob((2, 3, 4, 5))], [top])
    assert top.shape == (2, 3, 4, 5)


@pytest.mark.parametrize("cls", [FourAxes, TwoToFourAxes, FourAxesOwnReshape])
def test_every_reshape_checks_the_axes_first(cls):
    layer, bottom, top = four_axes(cls), Blob((2, 3, 4, 5)), Blob()
    layer.setup([bottom], [top])
    bottom.reshape((2, 3, 4, 5, 6))
    with pytest.raises(LayerSetupError, match="bottom 0 must have"):
        layer.reshape([bottom], [top])
    with pytest.raises(LayerSetupError, match="bottom 0 must have"):
        layer.forward([bottom], [top])


def test_reshape_is_wrapped_only_where_axes_are_declared_and_only_once():
    assert TwoToFourAxes.reshape is FourAxes.reshape
    assert FourAxesOwnReshape.reshape.__wrapped__.__qualname__ == "FourAxesOwnReshape.reshape"
    assert not hasattr(TwoTops.reshape, "checks_bottom_axes")
