"""boost's uniform_int and uniform_real, fed hand-picked raw draws."""

import numpy as np

from caffe_core.rng.boost_uniform import uniform_int, uniform_real
from caffe_core.rng.mt19937 import Cursor, Mt19937


def test_uniform_int_widens_the_bucket_when_the_range_divides_2_to_32():
    # boost: brange = 2^32 - 1, range 1: bucket = brange / 2, and ++bucket as brange % 2 == 1 -> 2^31.
    cursor = Cursor(np.array([2**31 - 1, 2**31], dtype=np.uint32), Mt19937(1))
    assert uniform_int(cursor, 1) == 0
    assert uniform_int(cursor, 1) == 1


def test_uniform_real_redraws_a_value_that_reaches_high_and_shifts_the_redraw_by_low():
    # float(2^32 - 1) rounds to 2^32, so the first draw gives high and is redrawn; 0 then gives low.
    stream = Mt19937(1)
    stream.unread(np.array([2**32 - 1, 0], dtype=np.uint32))
    np.testing.assert_array_equal(uniform_real(stream, 1, np.float32(2), np.float32(5)), [2.0])
