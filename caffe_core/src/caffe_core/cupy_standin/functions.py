"""The stand-in's module functions: numpy's, run on device arrays only, plus cupy's explicit copies."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from caffe_core.cupy_standin.array import _value, missing, ndarray, to_numpy, wrap
from caffe_core.cupy_standin.ledger import LEDGER

# The numpy functions and ufuncs the project calls on device arrays (found by running the suite in GPU
# mode and by reading the GPU code paths); cupy has each with numpy's meaning. Add one only when a GPU path
# needs it.
DEVICE_FUNCTIONS = (
    "arange", "argmax", "bincount", "broadcast_to", "clip", "concatenate", "copyto",
    "cumsum", "dot", "empty", "full", "ones", "ones_like", "sort", "stack", "take", "take_along_axis",
    "transpose", "where", "zeros", "zeros_like",
)

UFUNCS = (
    "abs", "add", "arccos", "ceil", "cos", "divide", "exp", "floor", "fmax", "greater", "log", "matmul",
    "maximum", "minimum", "multiply", "power", "sign", "sin", "sqrt", "subtract", "tanh",
)


def device_function(name: str) -> Callable[..., Any]:
    """numpy's `name` on device arguments, giving device results."""
    function = getattr(np, name)

    def call(*args: Any, **kwargs: Any) -> Any:
        where = f"cupy.{name}"
        return wrap(function(*to_numpy(args, where), **{k: to_numpy(v, where) for k, v in kwargs.items()}))

    call.__name__ = name
    call.__doc__ = f"cupy.{name} on the stand-in."
    return call


class ufunc:  # noqa: N801 - cupy's class name
    """A cupy ufunc: device arrays and scalars in, device arrays out; `at` as in cupy 13."""

    def __init__(self, name: str) -> None:
        self.__name__ = name
        self._ufunc: np.ufunc = getattr(np, name)

    def __call__(self, *args: Any, out: Any = None, **kwargs: Any) -> Any:
        operands = [_value(arg) for arg in args]
        if out is not None:
            kwargs["out"] = tuple(_value(o) for o in out) if isinstance(out, tuple) else _value(out)
        result = self._ufunc(*operands, **kwargs)
        return wrap(result) if out is None else out

    def at(self, a: ndarray, indices: Any, b: Any = None) -> None:
        """Unbuffered in-place operation on the elements `indices` picks (repeated indices each count)."""
        index = to_numpy(indices, f"cupy.{self.__name__}.at")
        if b is None:
            self._ufunc.at(_value(a), index)
        else:
            self._ufunc.at(_value(a), index, _value(b))

    def __getattr__(self, name: str) -> Any:
        raise missing(f"cupy.{self.__name__}", name)


def asarray(a: Any, dtype: Any = None, order: Any = None) -> ndarray:
    """A device array: the same one for a device array, else a counted copy of the host data."""
    if isinstance(a, ndarray):
        return a if dtype is None or a.dtype == np.dtype(dtype) else a.astype(dtype)
    if isinstance(a, (list, tuple)) and any(isinstance(item, ndarray) for item in a):
        return wrap(np.asarray(to_numpy(a, "cupy.asarray"), dtype=dtype))
    host = np.array(a, dtype=dtype, order=order or "K", copy=True)
    if host.dtype == object:
        raise ValueError("Unsupported dtype object")
    LEDGER.copied_to_device(host.nbytes)
    return ndarray._adopt(host)


def ascontiguousarray(a: ndarray, dtype: Any = None) -> ndarray:
    """A C-contiguous device array (the same one when it already is)."""
    if not isinstance(a, ndarray):
        raise TypeError(f"cupy.ascontiguousarray needs a device array, got {type(a)}")
    return wrap(np.ascontiguousarray(a._array, dtype=dtype))


def asnumpy(a: Any, stream: Any = None, out: np.ndarray | None = None) -> np.ndarray:
    """A host copy of a device array (host values pass through, as in cupy)."""
    if isinstance(a, ndarray):
        return a.get(out=out)
    return np.asarray(a)
