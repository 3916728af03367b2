"""cupy.lib.stride_tricks.as_strided on the stand-in: a view of the same device memory."""

from __future__ import annotations

from typing import Any

import numpy as np

from caffe_core.cupy_standin.array import ndarray, wrap


def as_strided(x: ndarray, shape: Any = None, strides: Any = None) -> ndarray:
    """A view of x with the given shape and byte strides (no bounds check, as in cupy)."""
    if not isinstance(x, ndarray):
        raise TypeError(f"as_strided needs a device array, got {type(x)}")
    return wrap(np.lib.stride_tricks.as_strided(x._array, shape, strides))
