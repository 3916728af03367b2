"""Mask unpooling helpers: targets, range checks, last-write-wins scatter, gathers."""

import numpy as np

from caffe_layers_seg import unpool_ops


def test_targets_offset_each_plane():
    mask = np.array([[[[0, 3]], [[1, 2]]]], dtype=np.float32)
    positions, targets = unpool_ops.mask_positions(np, mask, 4)
    np.testing.assert_array_equal(positions, [[[[0, 3]], [[1, 2]]]])
    np.testing.assert_array_equal(targets, [[[[0, 3]], [[5, 6]]]])


def test_out_of_range_names_the_first_bad_position():
    assert unpool_ops.out_of_range(np, np.array([0, 3, 1]), 4) is None
    assert unpool_ops.out_of_range(np, np.array([0, 4, -1]), 4) == 4
    assert unpool_ops.out_of_range(np, np.array([0, -1, 9]), 4) == -1


def test_scatter_keeps_the_last_duplicate_and_zeroes_the_rest():
    out = np.full(5, 7.0, dtype=np.float32)
    unpool_ops.scatter(np, np.array([1.0, 2.0, 3.0], np.float32), np.array([4, 1, 4]), out)
    np.testing.assert_array_equal(out, [0, 2, 0, 0, 3])


def test_gathers():
    top_diff = np.array([10.0, 20.0, 30.0, 40.0, 50.0], np.float32)
    targets = np.array([4, 1, 4])
    np.testing.assert_array_equal(unpool_ops.gather(top_diff, targets), [50, 20, 50])
    np.testing.assert_array_equal(unpool_ops.gather_winners(np, top_diff, targets), [0, 20, 50])


def test_winners_are_the_last_writers():
    chosen = unpool_ops.winners(np, np.array([4, 1, 4, 1, 0]), 6)
    np.testing.assert_array_equal(chosen, [4, 3, -1, -1, 2, -1])
    np.testing.assert_array_equal(unpool_ops.winners(np, np.zeros(0, np.int64), 2), [-1, -1])
