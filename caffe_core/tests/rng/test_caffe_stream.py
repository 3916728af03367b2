"""Caffe's caffe_rng_* functions on the stream: each value derived by hand from the raw mt19937 draws."""

import numpy as np
import pytest

from caffe_core.rng import boost_normal
from caffe_core.rng.caffe_stream import CaffeStream
from caffe_core.rng.vectorised import draw

F32 = np.float32


def raw(seed, count):
    return np.random.RandomState(seed).randint(0, 1 << 32, size=count, dtype=np.uint32)


def test_rand_is_the_raw_draw_and_child_streams_are_seeded_by_one():
    stream = CaffeStream(1701)
    first, second = raw(1701, 2)
    assert stream.rand() == first
    assert stream.child().seed == second


def test_uniform_is_u_over_2_to_32_scaled_in_float():
    # boost::uniform_real<float>(a, nextafter(b)): float(u) / 2^32 * (max - a) + a, all in float.
    low, high = F32(-0.5), F32(2.0)
    top = np.nextafter(high, F32(np.inf))
    expected = raw(3, 1000).astype(F32) / F32(4294967296.0) * (top - low) + low
    np.testing.assert_array_equal(CaffeStream(3).uniform(1000, -0.5, 2.0), expected)


def test_bernoulli_compares_u_with_p_times_2_to_32_and_p_zero_draws_nothing():
    stream = CaffeStream(4)
    expected = raw(4, 500).astype(F32) <= F32(0.3) * F32(4294967295.0)
    assert not stream.bernoulli(7, 0.0).any()
    np.testing.assert_array_equal(stream.bernoulli(500, 0.3), expected)


def test_shuffle_swaps_from_the_end_with_boosts_uniform_int():
    items = list(range(5))
    CaffeStream(11).shuffle(items)
    draws, expected = iter(raw(11, 100).tolist()), list(range(5))
    for i in range(4, 0, -1):
        bucket = 0xFFFFFFFF // (i + 1) + (0xFFFFFFFF % (i + 1) == i)
        j = i + 1
        while j > i:
            j = next(draws) // bucket
        expected[i], expected[j] = expected[j], expected[i]
    assert items == expected


def scalar_normals(seed, count):
    """boost's normal draws one at a time: the ziggurat's scalar replay from every attempt's first draw."""
    stream = CaffeStream(seed)

    def first_draws(block):
        return np.zeros(block.size, F32), np.zeros(block.size, bool)

    return draw(stream.mt, count, first_draws, boost_normal._unit_normal_from), stream


@pytest.mark.parametrize("seed", [1, 5, 1701, 31337])
def test_vectorised_normals_equal_the_one_at_a_time_ziggurat_and_leave_the_stream_alike(seed):
    reference, after = scalar_normals(seed, 40000)
    stream = CaffeStream(seed)
    np.testing.assert_array_equal(stream.gaussian(40000, 0.0, 1.0), reference)
    assert stream.rand() == after.rand()


def test_the_tail_and_rejections_occur_in_a_large_draw():
    values = CaffeStream(2).gaussian(200000, 0.0, 1.0)
    assert np.abs(values).max() > boost_normal.NORMAL_X[1]
    assert abs(values.mean()) < 0.01 and abs(values.std() - 1) < 0.01


def test_gaussian_scales_and_shifts_in_float():
    np.testing.assert_array_equal(CaffeStream(9).gaussian(100, 1.5, 0.25),
                                  CaffeStream(9).gaussian(100, 0.0, 1.0) * F32(0.25) + F32(1.5))


@pytest.mark.parametrize(("low", "high"), [(1.0, 0.0), (0.0, float("nan")), (float("nan"), 1.0)])
def test_uniform_refuses_bounds_caffe_refuses_and_never_loops_on_nan(low, high):
    with pytest.raises(ValueError, match=r"uniform draw needs low <= high \(Caffe's CHECK_LE\)"):
        CaffeStream(1701).uniform((3,), low, high)
