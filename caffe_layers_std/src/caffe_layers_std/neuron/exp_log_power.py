"""The arithmetic Exp, Log and Power share: shift + scale x, and ln(base) of a `base` field."""

from __future__ import annotations

import math

import numpy as np

from caffe_core.array_types import Array
from caffe_core.layer import Layer


def scale_and_shift(x: Array, scale: float | np.float32, shift: float | np.float32) -> Array:
    """shift + scale x, skipping a multiplication by 1 and an addition of 0 as Caffe does."""
    if scale != 1:
        x = x * scale
    if shift != 0:
        x = x + shift
    return x


def log_of_base(layer: Layer, base: float, field: str) -> float:
    """ln(base) for an Exp/Log `base` field, -1 meaning e; refuses a base that is not strictly positive."""
    if base == -1:
        return 1.0
    if base <= 0:
        raise layer.error(f"{field} must be strictly positive (or -1 for e), got {base}")
    return math.log(base)
