"""round_half_away: C's round() for float32 values."""

import numpy as np

from caffe_layers_rcnn.rounding import round_half_away


def test_halves_go_away_from_zero():
    values = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4999998, -1.4999999, 0.0, 7.0], dtype=np.float32)
    np.testing.assert_array_equal(round_half_away(np, values), [1, 2, 3, -1, -3, 2, -1, 0, 7])


def test_the_largest_float_below_a_half_rounds_down():
    below_half = np.nextafter(np.float32(0.5), np.float32(0))
    assert round_half_away(np, np.array([below_half]))[0] == 0
