"""C's round() on arrays: halfway values go away from zero (numpy's round goes to the even neighbour)."""

from __future__ import annotations

from caffe_core.array_types import Array, ArrayModule


def round_half_away(xp: ArrayModule, values: Array) -> Array:
    """round(v) as C computes it for float32 v, returned as float64 integers."""
    # In float64 |v| + 0.5 is exact for every float32 v below 2**28, so the floor sees the true halfway point.
    wide = values.astype(xp.float64)
    return xp.sign(wide) * xp.floor(xp.abs(wide) + 0.5)
