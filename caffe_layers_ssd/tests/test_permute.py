"""Permute: the golden case, orders completed with the axes left out, the identity order sharing data and
diff, gradients with the fork's checker parameters, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def permute_text(orders):
    return "name: 'perm' type: 'Permute' permute_param { " + " ".join(f"order: {o}" for o in orders) + " }"


def test_golden(golden_case):
    assert check_layer_case(golden_case("permute_0231")) == []


@pytest.mark.parametrize(("orders", "full"), [
    ([0, 2, 3, 1], (0, 2, 3, 1)),
    ([3, 2, 1, 0], (3, 2, 1, 0)),
    ([1], (1, 0, 2, 3)),
    ([2, 0], (2, 0, 1, 3)),
])
def test_forward_is_a_transpose(make_layer, gaussian, orders, full):
    bottom = gaussian((2, 3, 4, 5))
    layer, top = make_layer(permute_text(orders)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    assert top.shape == tuple(bottom.shape[a] for a in full)
    np.testing.assert_array_equal(top.cpu_data(), np.transpose(bottom.cpu_data(), full))
    top.mutable_cpu_diff()[...] = np.random.default_rng(1).normal(size=top.shape)
    layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), np.transpose(top.cpu_diff(), np.argsort(full)))


def test_three_axes(make_layer, gaussian):
    bottom = gaussian((2, 3, 4))
    layer, top = make_layer(permute_text([2, 1])), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    np.testing.assert_array_equal(top.cpu_data(), np.transpose(bottom.cpu_data(), (2, 1, 0)))


def test_permuting_twice_restores(make_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    first, second = make_layer(permute_text([0, 2, 3, 1])), make_layer(permute_text([0, 3, 1, 2]))
    middle, top = Blob(), Blob()
    first.setup([bottom], [middle])
    second.setup([middle], [top])
    first.forward([bottom], [middle])
    second.forward([middle], [top])
    np.testing.assert_array_equal(top.cpu_data(), bottom.cpu_data())


@pytest.mark.parametrize("orders", [[], [0, 1, 2, 3], [0, 1]])
def test_identity_shares_data_and_diff(make_layer, gaussian, orders):
    bottom = gaussian((2, 3, 4, 5))
    layer, top = make_layer(permute_text(orders)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    assert top.shape == bottom.shape
    assert top.data_memory is bottom.data_memory
    layer.backward([top], [True], [bottom])
    assert bottom.diff_memory is top.diff_memory


def test_gradient(make_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(make_layer(permute_text([0, 2, 3, 1])), [bottom],
                                                          [Blob()])


def test_no_diff_without_propagate_down(make_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    layer, top = make_layer(permute_text([0, 2, 3, 1])), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    bottom.mutable_cpu_diff()[...] = 7
    layer.backward([top], [False], [bottom])
    assert (bottom.cpu_diff() == 7).all()


@pytest.mark.parametrize(("orders", "message"), [([4], "order 4"), ([1, 1], "duplicate")])
def test_refusals(make_layer, gaussian, orders, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(permute_text(orders)).setup([gaussian((2, 3, 4, 5))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 5))
    gpu_matches_cpu(permute_text([0, 2, 3, 1]), [x])
