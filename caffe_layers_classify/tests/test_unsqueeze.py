"""Unsqueeze: the fork's golden case, shapes for each dim, the copy and its gradient, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def text(dim: int | None) -> str:
    """An Unsqueeze layer with this dim (no unsqueeze_param when None)."""
    block = "" if dim is None else f"unsqueeze_param {{ dim: {dim} }}"
    return f'name: "u" type: "Unsqueeze" {block}'


def test_golden(golden_case):
    assert check_layer_case(golden_case("unsqueeze_neg1")) == []


@pytest.mark.parametrize(("dim", "shape"), [(0, (1, 2, 3, 4)), (1, (2, 1, 3, 4)), (3, (2, 3, 4, 1)),
                                            (-1, (2, 3, 4, 1)), (-2, (2, 3, 1, 4)), (-4, (1, 2, 3, 4))])
def test_shapes_and_copy(make_layer, gaussian, dim, shape):
    layer, bottom, top = make_layer(text(dim)), gaussian((2, 3, 4)), Blob()
    layer.setup([bottom], [top])
    assert top.shape == shape
    layer.forward([bottom], [top])
    np.testing.assert_array_equal(top.cpu_data(), bottom.cpu_data().reshape(shape))


def test_follows_a_reshaped_bottom(make_layer, gaussian):
    layer, bottom, top = make_layer(text(-1)), gaussian((2, 3)), Blob()
    layer.setup([bottom], [top])
    bottom.reshape((4, 5))
    layer.forward([bottom], [top])
    assert top.shape == (4, 5, 1)


def test_backward_copies_the_diff(make_layer, gaussian):
    layer, bottom, top = make_layer(text(1)), gaussian((2, 3)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = np.arange(6).reshape(2, 1, 3)
    layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), np.arange(6).reshape(2, 3))


def test_gradient(make_layer, gaussian):
    checker = GradientChecker(1e-2, 1e-3)
    checker.check_gradient_exhaustive(make_layer(text(-1)), [gaussian((2, 3, 2))], [Blob()])


@pytest.mark.parametrize(("dim", "message"), [
    (None, "unsqueeze_param.dim must be set"), (4, "dim 4 is outside \\[-4, 3\\]"),
    (-5, "dim -5 is outside \\[-4, 3\\]")])
def test_refusals(make_layer, gaussian, dim, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(text(dim)).setup([gaussian((2, 3, 4))], [Blob()])


def test_empty_block_is_refused(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="unsqueeze_param.dim must be set"):
        make_layer('name: "u" type: "Unsqueeze" unsqueeze_param { }').setup([gaussian((2, 3))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(text(2), [np.random.default_rng(3).standard_normal((2, 3, 4))])
