"""Caffe's float rounding: libm-style expf/logf and sums accumulated in index order."""

import math

import numpy as np

from caffe_layers_std.rounding import expf, logf, sequential_sum

# Includes arguments where numpy's own float32 exp (6.2654047, -9.945229) and log (6.275405, 0.8824998) are an
# ulp away from the correctly rounded result.
VALUES = np.array([-20.5, -9.945229, -0.7, 0.1, 0.8824998, 6.2654047, 6.275405, 40.0], dtype=np.float32)


def test_expf_is_the_correctly_rounded_float():
    got = expf(np, VALUES)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [np.float32(math.exp(v)) for v in VALUES.tolist()])


def test_logf_is_the_correctly_rounded_float():
    positive = np.abs(VALUES)
    got = logf(np, positive)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [np.float32(math.log(v)) for v in positive.tolist()])


def test_sequential_sum_rounds_after_each_addition():
    # 2^24 + 1 rounds back to 2^24 in float32, so adding 1 twice in turn leaves 2^24, not the exact 2^24 + 2.
    values = np.array([2.0**24, 1, 1], dtype=np.float32)
    assert sequential_sum(np, values) == np.float32(2.0**24)
    assert sequential_sum(np, values[::-1]) == np.float32(2.0**24 + 2)


def test_sequential_sum_along_the_last_axis_from_a_start():
    values = np.array([[1, 1], [2, 3]], dtype=np.float32)
    start = np.array([2.0**24, 10], dtype=np.float32)
    np.testing.assert_array_equal(sequential_sum(np, values, start=start), [2.0**24, 15])


def test_sequential_sum_of_nothing():
    assert sequential_sum(np, np.zeros(0, dtype=np.float32)) == 0
    np.testing.assert_array_equal(sequential_sum(np, np.zeros((2, 0), np.float32), start=np.ones(2)), [1, 1])
