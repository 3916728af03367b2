"""Float arithmetic rounded as Caffe's C++ rounds it, where numpy's float32 kernels round differently."""

from __future__ import annotations

from caffe_core.array_types import Array, ArrayModule


def expf(xp: ArrayModule, x: Array) -> Array:
    """exp(x) evaluated in double and rounded to x's precision, as libm's expf returns it."""
    return xp.exp(x.astype(xp.float64)).astype(x.dtype)


def logf(xp: ArrayModule, x: Array) -> Array:
    """log(x) evaluated in double and rounded to x's precision, as libm's logf returns it."""
    return xp.log(x.astype(xp.float64)).astype(x.dtype)


def sequential_sum(xp: ArrayModule, values: Array, start: Array | None = None) -> Array:
    """start + v[..., 0] + v[..., 1] + ... along the last axis, rounded at each step like Caffe's loops."""
    if start is not None:
        values = xp.concatenate((xp.asarray(start, dtype=values.dtype)[..., None], values), axis=-1)
    if values.shape[-1] == 0:
        return xp.zeros(values.shape[:-1], dtype=values.dtype)
    return xp.cumsum(values, axis=-1)[..., -1]
