"""BatchReindex: golden case, forward with repeats, gradient, bad indices, index backward refused."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "r" type: "BatchReindex"'


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("batchreindex")) == []


def test_forward_and_backward_with_repeats(make_layer, blob_of):
    x = np.random.default_rng(7).standard_normal((5, 2, 3)).astype(np.float32)
    idx = [2, 0, 1, 2, 4, 0]
    layer = make_layer(LAYER)
    bottom, index, top = blob_of(x), blob_of(idx), Blob()
    layer.setup([bottom, index], [top])
    layer.forward([bottom, index], [top])
    np.testing.assert_array_equal(top.cpu_data(), x[idx])
    dy = np.random.default_rng(8).standard_normal(top.shape).astype(np.float32)
    top.mutable_cpu_diff()[...] = dy
    bottom.mutable_cpu_diff()[...] = 99
    layer.backward([top], [True, False], [bottom, index])
    expected = np.zeros_like(x)
    np.add.at(expected, idx, dy)
    np.testing.assert_allclose(bottom.cpu_diff(), expected, rtol=1e-6)


def test_gradient(make_layer, blob_of):
    x = np.random.default_rng(1701).standard_normal((5, 2, 3))
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(
        make_layer(LAYER), [blob_of(x), blob_of([2, 0, 1, 2, 4, 0])], [Blob()], check_bottom=0)


@pytest.mark.parametrize("idx", [[0, -1], [0, 5]])
def test_bad_index(make_layer, blob_of, idx):
    layer = make_layer(LAYER)
    bottom, index, top = blob_of(np.zeros((5, 2))), blob_of(idx), Blob()
    layer.setup([bottom, index], [top])
    message = rf"'r'.*index bottom holds {idx[1]}; every index must lie in \[0, 5\)"
    with pytest.raises(LayerSetupError, match=message):
        layer.forward([bottom, index], [top])


def test_index_must_be_1d(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="1-D"):
        make_layer(LAYER).setup([blob_of(np.zeros((5, 2))), blob_of([[0, 1]])], [Blob()])


def test_backward_to_index_refused(make_layer, blob_of):
    layer = make_layer(LAYER)
    bottom, index, top = blob_of(np.zeros((5, 2))), blob_of([1, 0]), Blob()
    layer.setup([bottom, index], [top])
    layer.forward([bottom, index], [top])
    with pytest.raises(LayerSetupError, match="index bottom"):
        layer.backward([top], [True, True], [bottom, index])
