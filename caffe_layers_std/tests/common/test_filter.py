"""Filter: golden case, several filtered bottoms, the all-zero selector, gradient, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "f" type: "Filter"'


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("filter")) == []


def test_two_bottoms(make_layer, blob_of):
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 3, 2)).astype(np.float32)
    b = rng.standard_normal((4, 5)).astype(np.float32)
    selector = [0, 1, 0, 2.5]
    layer = make_layer(LAYER)
    bottoms, tops = [blob_of(a), blob_of(b), blob_of(selector)], [Blob(), Blob()]
    layer.setup(bottoms, tops)
    layer.forward(bottoms, tops)
    np.testing.assert_array_equal(tops[0].cpu_data(), a[[1, 3]])
    np.testing.assert_array_equal(tops[1].cpu_data(), b[[1, 3]])
    tops[0].mutable_cpu_diff()[...] = 1
    tops[1].mutable_cpu_diff()[...] = 2
    for blob in bottoms:
        blob.mutable_cpu_diff()[...] = 9
    layer.backward(tops, [True, True, False], bottoms)
    kept = np.array([0, 1, 0, 1], dtype=np.float32)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), kept[:, None, None] * np.ones((4, 3, 2)))
    np.testing.assert_array_equal(bottoms[1].cpu_diff(), 2 * kept[:, None] * np.ones((4, 5)))


def test_all_zero_selector(make_layer, blob_of):
    layer = make_layer(LAYER)
    bottoms, tops = [blob_of(np.ones((3, 2))), blob_of([0, 0, 0])], [Blob()]
    layer.setup(bottoms, tops)
    layer.forward(bottoms, tops)
    assert tops[0].shape == (0, 2)
    bottoms[0].mutable_cpu_diff()[...] = 5
    layer.backward(tops, [True, False], bottoms)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), np.zeros((3, 2)))


def test_gradient(make_layer, blob_of):
    x = np.random.default_rng(1701).standard_normal((4, 3, 2))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(
        make_layer(LAYER), [blob_of(x), blob_of([1, 0, 1, 1])], [Blob()], check_bottom=0)


def test_top_count_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="one top per bottom"):
        make_layer(LAYER).setup([blob_of(np.ones((3, 2))), blob_of([1, 0, 1])], [Blob(), Blob()])


def test_first_dims_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="first dimension"):
        make_layer(LAYER).setup([blob_of(np.ones((3, 2))), blob_of([1, 0])], [Blob()])


def test_backward_to_selector_refused(make_layer, blob_of):
    layer = make_layer(LAYER)
    bottoms, tops = [blob_of(np.ones((3, 2))), blob_of([1, 0, 1])], [Blob()]
    layer.setup(bottoms, tops)
    layer.forward(bottoms, tops)
    with pytest.raises(LayerSetupError, match="selector"):
        layer.backward(tops, [True, True], bottoms)
