"""NeuronLayer: one bottom, one top shaped like it, in place allowed."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.proto import caffe_pb2


class Negate(NeuronLayer):
    type = "TestNegate"

    def forward_on(self, side, bottom, top):
        top[0].mutable_data_on(side)[...] = -bottom[0].data_on(side)


def negate():
    return Negate(caffe_pb2.LayerParameter(name="n", type="TestNegate"))


def test_top_takes_the_bottom_shape(blob_of):
    top = Blob()
    negate().setup([blob_of(np.zeros((2, 3, 4)))], [top])
    assert top.shape == (2, 3, 4)


def test_in_place_use(blob_of):
    blob = blob_of([1.0, -2.0])
    layer = negate()
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    np.testing.assert_array_equal(blob.cpu_data(), [-1.0, 2.0])


@pytest.mark.parametrize(("bottoms", "tops", "message"), [(2, 1, "takes 1 bottom"), (1, 2, "produces 1 top")])
def test_one_bottom_and_one_top(bottoms, tops, message):
    with pytest.raises(LayerSetupError, match=message):
        negate().setup([Blob((3,)) for _ in range(bottoms)], [Blob() for _ in range(tops)])
