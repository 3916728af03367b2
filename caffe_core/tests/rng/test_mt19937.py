"""boost::mt19937 as Caffe seeds it: the C++ standard's check value, and draws handed back in order."""

import numpy as np

from caffe_core.rng.mt19937 import Mt19937


def test_the_ten_thousandth_output_of_the_default_seed_is_the_standards_check_value():
    # [rand.predef]: mt19937 default-constructed (seed 5489) gives 4123659995 as its 10000th output.
    stream = Mt19937(5489)
    assert int(stream.raw(10000)[-1]) == 4123659995


def test_unread_draws_come_back_first_and_in_order():
    stream, reference = Mt19937(7), Mt19937(7)
    first = stream.raw(6)
    stream.unread(first[3:])
    np.testing.assert_array_equal(stream.raw(5), reference.raw(8)[3:])
