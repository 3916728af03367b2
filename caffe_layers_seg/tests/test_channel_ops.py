"""Per-channel views and two-stage reductions."""

import numpy as np

from caffe_layers_seg.channel_ops import channel_view, per_channel, reduce_channels


def test_reduce_channels_sums_and_scales_each_stage():
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(reduce_channels(a), a.sum(axis=(0, 2)))
    np.testing.assert_allclose(reduce_channels(a, 1 / 4, 1 / 2), a.mean(axis=(0, 2)), rtol=1e-6)
    assert reduce_channels(a).dtype == np.float32


def test_views():
    a = np.zeros((2, 3, 4, 5), dtype=np.float32)
    assert channel_view(a, 2, 3).shape == (2, 3, 20)
    assert per_channel(np.arange(3)).shape == (1, 3, 1)
