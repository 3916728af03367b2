"""Row/column resampling matrices, their adjoint, and the ordered tap scatter."""

import numpy as np

from caffe_layers_seg import separable


def test_matrices():
    selection = separable.selection_matrix(np.array([1, -1, 0]), 2)
    np.testing.assert_array_equal(selection, [[0, 1], [0, 0], [1, 0]])
    matrix = separable.weight_matrix(3, [(np.array([0, 1]), np.array([0.25, 0.5])),
                                         (np.array([1, 1]), np.array([0.75, 0.5]))])
    np.testing.assert_array_equal(matrix, [[0.25, 0.75, 0], [0, 1, 0]])


def test_transposed_is_the_adjoint():
    rng = np.random.default_rng(0)
    rows = rng.random((5, 3)).astype(np.float32)
    cols = rng.random((4, 2)).astype(np.float32)
    x = rng.random((2, 3, 3, 2)).astype(np.float32)
    dy = rng.random((2, 3, 5, 4)).astype(np.float32)
    y = rows @ x @ cols.T
    dx = separable.transposed(np, rows, dy, cols)
    np.testing.assert_allclose((y * dy).sum(), (x * dx).sum(), rtol=1e-5)


def test_scatter_taps_adds_in_order_per_plane():
    bottom_diff = np.zeros((1, 2, 1, 2), np.float32)
    top_diff = np.array([[[[1.0, 2.0]], [[3.0, 4.0]]]], np.float32)
    taps = [(np.array([0, 1]), np.array([1.0, 0.5])), (np.array([1, 1]), np.array([0.0, 0.5]))]
    separable.scatter_taps(np, bottom_diff, top_diff, taps)
    np.testing.assert_array_equal(bottom_diff[0, :, 0], [[1, 2], [3, 4]])
