"""Per-channel reductions over (N, C, spatial) views, in the two stages (spatial, then batch) of the forks'
gemv pairs, each stage scaled as the fork scales it."""

from __future__ import annotations

import numpy as np

from caffe_core.array_types import Array

F32 = np.float32


def channel_view(array: Array, num: int, channels: int) -> Array:
    """An (N, C, spatial) view of a blob's array."""
    return array.reshape(num, channels, -1)


def reduce_channels(a: Array, spatial_scale: float = 1.0, batch_scale: float = 1.0) -> Array:
    """(sum over spatial positions) * spatial_scale, then (sum over the batch) * batch_scale: shape (C,)."""
    per_item = a.sum(axis=2, dtype=F32)
    if spatial_scale != 1.0:
        per_item = per_item * F32(spatial_scale)
    total = per_item.sum(axis=0, dtype=F32)
    if batch_scale != 1.0:
        total = total * F32(batch_scale)
    return total


def per_channel(values: Array) -> Array:
    """A (C,) vector shaped to broadcast over (N, C, spatial)."""
    return values.reshape(1, -1, 1)
