"""Flip: width (default), height, both, by hand; the legacy (N, C, H, W) view of a 2-axis blob; gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

X = np.arange(2 * 2 * 2 * 3, dtype=np.float32).reshape(2, 2, 2, 3)


def run(make_layer, blob_of, params, x=X):
    layer = make_layer(f'name: "f" type: "Flip" bottom: "x" top: "y" {params}')
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


@pytest.mark.parametrize(("params", "expected", "first_row"), [
    ("", X[:, :, :, ::-1], [2, 1, 0]),
    ("flip_param { flip_width: false flip_height: true }", X[:, :, ::-1, :], [3, 4, 5]),
    ("flip_param { flip_height: true }", X[:, :, ::-1, ::-1], [5, 4, 3]),
    ("flip_param { flip_width: false }", X, [0, 1, 2]),
])
def test_by_hand(make_layer, blob_of, params, expected, first_row):
    # Image 0, channel 0 of X is [[0, 1, 2], [3, 4, 5]].
    _, _, top = run(make_layer, blob_of, params)
    np.testing.assert_array_equal(top[0].cpu_data(), expected)
    assert list(top[0].cpu_data()[0, 0, 0]) == first_row


def test_a_two_axis_blob_has_width_one(make_layer, blob_of):
    # The fork's legacy accessors make (N, C) an (N, C, 1, 1) blob: the flip leaves it as it is.
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    _, _, top = run(make_layer, blob_of, "", x)
    np.testing.assert_array_equal(top[0].cpu_data(), x)


def test_backward_mirrors_the_diff(make_layer, blob_of):
    layer, bottom, top = run(make_layer, blob_of, "flip_param { flip_height: true }")
    top[0].mutable_cpu_diff()[...] = X
    layer.backward(top, [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), X[:, :, ::-1, ::-1])


def test_refuses_in_place(make_layer, blob_of):
    layer = make_layer('name: "f" type: "Flip" bottom: "x" top: "x"')
    blob = blob_of(X)
    with pytest.raises(LayerSetupError, match="in place"):
        layer.setup([blob], [blob])


@pytest.mark.parametrize("params", ["", "flip_param { flip_height: true }"])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(f'name: "f" type: "Flip" {params}')
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, [gaussian((2, 2, 3, 4))], [Blob()])
