"""NeuronLayer: one bottom, one top shaped like it."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError


def test_top_takes_the_bottom_shape(make_layer, blob_of):
    layer = make_layer('name: "n" type: "TanH"')
    top = Blob()
    layer.setup([blob_of(np.zeros((2, 3, 4)))], [top])
    assert top.shape == (2, 3, 4)


def test_two_bottoms_are_refused(make_layer, blob_of):
    layer = make_layer('name: "n" type: "Sigmoid"')
    with pytest.raises(LayerSetupError, match="takes 1 bottom"):
        layer.setup([blob_of(np.zeros(3)), blob_of(np.zeros(3))], [Blob()])
