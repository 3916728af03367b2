"""Workspace: buffers grow only when needed, keep their type, and bordered buffers refill on a new shape."""

import numpy as np

from caffe_layers_vision.workspace import Workspace, carved_bytes, shared_scratch


def test_buffers_grow_only():
    work = Workspace()
    big = work.array(np, "a", (4, 5))
    small = work.array(np, "a", (2, 3))
    assert np.shares_memory(big, small)
    assert work.nbytes() == 4 * 5 * 4
    work.array(np, "a", (5, 5))
    assert work.nbytes() == 5 * 5 * 4


def test_dtype_change_reallocates():
    work = Workspace()
    floats = work.array(np, "a", (8,))
    ints = work.array(np, "a", (8,), np.int8)
    assert ints.dtype == np.int8 and not np.shares_memory(floats, ints)


def test_bordered_fills_once_per_shape_and_value():
    work = Workspace()
    first = work.bordered(np, "p", (3, 3), -1.0)
    first[1, 1] = 5
    assert work.bordered(np, "p", (3, 3), -1.0)[1, 1] == 5
    assert (work.bordered(np, "p", (3, 3), 0.0) == 0).all()
    assert (work.bordered(np, "p", (2, 4), 0.0) == 0).all()


def test_zeros_clears():
    work = Workspace()
    work.array(np, "z", (4,))[...] = 3
    assert (work.zeros(np, "z", (4,)) == 0).all()


def test_shared_scratch_is_one_per_thread():
    assert shared_scratch() is shared_scratch()


def test_bordered_refills_when_the_inner_region_moves():
    work = Workspace()
    first = work.bordered(np, "p", (4,), 0.0, inner=slice(0, 3))
    first[:3] = 5
    assert (work.bordered(np, "p", (4,), 0.0, inner=slice(0, 3))[:3] == 5).all()
    assert (work.bordered(np, "p", (4,), 0.0, inner=slice(0, 2)) == 0).all()


def test_arrays_are_carved_from_one_buffer():
    work = Workspace()
    first, second = work.arrays(np, "conv", [(3, 5), (2, 2)])
    assert first.shape == (3, 5) and second.shape == (2, 2)
    assert not np.shares_memory(first, second)
    assert work.nbytes() == carved_bytes([(3, 5), (2, 2)])
    assert second.ctypes.data % 64 == first.ctypes.data % 64
    again, = work.arrays(np, "conv", [(3, 5)])
    assert np.shares_memory(again, first)
    assert work.nbytes() == carved_bytes([(3, 5), (2, 2)])


def test_holds_what_the_last_carver_left_until_the_next_carve():
    work = Workspace()
    work.arrays(np, "conv", [(3, 5), (2, 2)], contents="columns of x")
    assert work.holds(np, "conv", [(3, 5), (2, 2)], "columns of x")
    assert not work.holds(np, "conv", [(3, 5)], "columns of y")
    assert not work.holds(np, "conv", [(3, 5), (5, 5)], "columns of x")  # would reallocate
    work.arrays(np, "conv", [(3, 5)])
    assert not work.holds(np, "conv", [(3, 5)], "columns of x")
