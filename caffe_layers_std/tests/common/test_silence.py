"""Silence: golden case; backward zeroes the diffs of the bottoms that ask for it."""

import numpy as np

from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case):
    assert check_layer_case(golden_case("silence")) == []


def test_backward_zeroes_requested_diffs(make_layer, blob_of):
    layer = make_layer('name: "s" type: "Silence"')
    bottoms = [blob_of(np.ones((2, 3))), blob_of(np.ones(4))]
    layer.setup(bottoms, [])
    layer.forward(bottoms, [])
    for blob in bottoms:
        blob.mutable_cpu_diff()[...] = 3
    layer.backward([], [True, False], bottoms)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), np.zeros((2, 3)))
    np.testing.assert_array_equal(bottoms[1].cpu_diff(), np.full(4, 3))
