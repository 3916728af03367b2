"""Parameter: golden case, zero initialisation, the top shares the blob's data and diff."""

import numpy as np

from caffe_core.blob import Blob
from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case):
    assert check_layer_case(golden_case("parameter")) == []


def test_shares_the_learnable_blob(make_layer):
    layer = make_layer('name: "p" type: "Parameter" parameter_param { shape { dim: 2 dim: 3 } }')
    top = Blob()
    layer.setup([], [top])
    assert len(layer.blobs) == 1
    assert top.shape == layer.blobs[0].shape == (2, 3)
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), np.zeros((2, 3)))
    layer.forward([], [top])
    assert top.data_memory is layer.blobs[0].data_memory
    assert top.diff_memory is layer.blobs[0].diff_memory
    top.mutable_cpu_diff()[...] = 4
    np.testing.assert_array_equal(layer.blobs[0].cpu_diff(), np.full((2, 3), 4))
