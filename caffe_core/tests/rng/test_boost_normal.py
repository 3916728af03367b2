"""boost's normal_distribution<float> ziggurat, fed hand-picked raw draws."""

import numpy as np

from caffe_core.rng import boost_normal
from caffe_core.rng.mt19937 import Mt19937
from caffe_core.rng.ziggurat_tables import NORMAL_X


def test_x_equal_to_the_next_layers_edge_takes_the_two_draw_path():
    # Raw 0xFF: layer 127, x = 0, and boost's fast test is x < x[128] = 0, so it draws y01 (raw 0) and
    # accepts 0. The third raw, layer 0 with r = 1/2, is then the second value.
    assert NORMAL_X[128] == 0
    stream = Mt19937(1)
    stream.unread(np.array([0xFF, 0, (1 << 31) | 0x01], dtype=np.uint32))
    values = boost_normal.normal(stream, 2, np.float32(0), np.float32(1))
    np.testing.assert_array_equal(values, [0.0, np.float32(0.5) * np.float32(NORMAL_X[0])])
