"""The stand-in's device array: numpy underneath, but no implicit way to or from the host.

As cupy's ndarray, it refuses `numpy.asarray`, numpy's ufuncs and functions, and any operation mixing it
with a host array; reductions and element reads give 0-d device arrays; only `get`, `set`,
`cupy.asnumpy`/`cupy.asarray` and the scalar conversions (`float`, `int`, `bool`, `item`) cross, and
each crossing is counted in the ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from caffe_core.cupy_standin.ledger import LEDGER

IMPLICIT_CONVERSION = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
                       "construct a NumPy array explicitly.")


class StandinUnsupported(AttributeError):
    """The project used a part of cupy's API that the stand-in does not implement."""


def missing(owner: str, name: str) -> StandinUnsupported:
    """The loud failure for an API the stand-in lacks."""
    return StandinUnsupported(f"the cupy stand-in does not implement {owner}.{name}: add it to "
                              f"caffe_core.cupy_standin with cupy's exact semantics, or avoid it")


def to_numpy(value: Any, where: str) -> Any:
    """The numpy value behind a device argument; refuses host arrays and containers of host data."""
    if isinstance(value, ndarray):
        return value._array
    if isinstance(value, np.ndarray):
        raise TypeError(f"{where}: a numpy.ndarray (host) was mixed with device arrays; copy it explicitly "
                        f"with cupy.asarray first")
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(item, where) for item in value)
    return value


def wrap(value: Any) -> Any:
    """Device arrays for numpy results: arrays, and numpy scalars as 0-d arrays (cupy returns no scalars)."""
    if isinstance(value, np.ndarray):
        return ndarray._adopt(value)
    if isinstance(value, np.generic):
        return ndarray._adopt(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(wrap(item) for item in value)
    return value


def _index(key: Any) -> Any:
    """A numpy index from a device index; Python lists of indices are uploaded, as cupy does."""
    if isinstance(key, tuple):
        return tuple(_index(k) for k in key)
    if isinstance(key, ndarray):
        return key._array
    if isinstance(key, np.ndarray):
        raise TypeError("a numpy.ndarray (host) cannot index a device array; copy it with cupy.asarray first")
    if isinstance(key, list):
        host = np.asarray(key)
        LEDGER.copied_to_device(host.nbytes)
        return host
    return key


def _value(value: Any) -> Any:
    """A numpy operand from a device array or a scalar; a host array raises as in cupy."""
    if isinstance(value, ndarray):
        return value._array
    if isinstance(value, (bool, int, float, complex, np.generic)):
        return value
    raise TypeError(f"Unsupported type {type(value)}: only device arrays and scalars mix with device arrays")


def _binary(op: np.ufunc, reflected: bool = False) -> Callable[[ndarray, Any], Any]:
    def method(self: ndarray, other: Any) -> Any:
        other_value = _value(other)
        return wrap(op(other_value, self._array) if reflected else op(self._array, other_value))

    return method


def _inplace(op: np.ufunc) -> Callable[[ndarray, Any], ndarray]:
    def method(self: ndarray, other: Any) -> ndarray:
        op(self._array, _value(other), out=self._array)
        return self

    return method


def _unary(op: np.ufunc) -> Callable[[ndarray], Any]:
    def method(self: ndarray) -> Any:
        return wrap(op(self._array))

    return method


# ndarray methods that stay on the device: they take device arrays or Python values and give device arrays.
DEVICE_METHODS = frozenset({
    "all", "any", "argmax", "argmin", "argsort", "astype", "clip", "copy", "cumsum", "dot", "fill", "flatten",
    "max", "mean", "min", "nonzero", "prod", "ravel", "repeat", "reshape", "sort", "squeeze", "std", "sum",
    "swapaxes", "take", "transpose", "var", "view",
})


class ndarray:  # noqa: N801 - cupy's class name
    """A device array of the stand-in (numpy underneath)."""

    __slots__ = ("_array", "__weakref__")
    __array_ufunc__ = None
    __array_priority__ = 100

    def __init__(self, shape: int | tuple[int, ...], dtype: npt.DTypeLike = float) -> None:
        self._array = np.empty(shape, dtype=dtype)
        LEDGER.hold(self._array)

    @classmethod
    def _adopt(cls, array: np.ndarray) -> ndarray:
        device = object.__new__(cls)
        device._array = array
        LEDGER.hold(array)
        return device

    # ----- the refusals -----
    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(IMPLICIT_CONVERSION)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        return NotImplemented

    def __getattr__(self, name: str) -> Any:
        if name not in DEVICE_METHODS:
            raise missing("ndarray", name)
        method = getattr(self._array, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return wrap(method(*to_numpy(args, f"ndarray.{name}"),
                               **{k: to_numpy(v, f"ndarray.{name}") for k, v in kwargs.items()}))

        return call

    # ----- explicit copies -----
    def get(self, stream: Any = None, out: np.ndarray | None = None) -> np.ndarray:
        """Copies the array to the host (into `out` when given)."""
        LEDGER.copied_to_host(self._array.nbytes)
        if out is None:
            return self._array.copy()
        if not isinstance(out, np.ndarray) or out.shape != self._array.shape:
            raise ValueError("Shape mismatch or not a numpy.ndarray for get(out=...)")
        np.copyto(out, self._array)
        return out

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        """Copies a host array of the same shape and dtype into the array."""
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        if arr.shape != self._array.shape or arr.dtype != self._array.dtype:
            raise ValueError(f"Shape or dtype mismatch: set({arr.shape} {arr.dtype}) on "
                             f"{self._array.shape} {self._array.dtype}")
        LEDGER.copied_to_device(arr.nbytes)
        np.copyto(self._array, arr)

    def _scalar(self) -> Any:
        if self._array.size != 1:
            raise TypeError("only size-1 arrays can be converted to Python scalars")
        LEDGER.copied_to_host(self._array.itemsize)
        return self._array.reshape(()).item()

    def item(self) -> Any:
        """The single element, copied to the host."""
        return self._scalar()

    def tolist(self) -> Any:
        """The elements as nested Python lists, copied to the host."""
        LEDGER.copied_to_host(self._array.nbytes)
        return self._array.tolist()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __bool__(self) -> bool:
        return bool(self._scalar())

    def __repr__(self) -> str:
        LEDGER.copied_to_host(self._array.nbytes)
        return repr(self._array)

    # ----- shape and type -----
    @property
    def shape(self) -> tuple[int, ...]:
        """The array's shape."""
        return self._array.shape

    @shape.setter
    def shape(self, value: tuple[int, ...]) -> None:
        self._array.shape = value

    @property
    def dtype(self) -> np.dtype:
        """The element type."""
        return self._array.dtype

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self._array.ndim

    @property
    def size(self) -> int:
        """The number of elements."""
        return self._array.size

    @property
    def nbytes(self) -> int:
        """The bytes the elements take."""
        return self._array.nbytes

    @property
    def itemsize(self) -> int:
        """The bytes of one element."""
        return self._array.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        """Byte steps per axis."""
        return self._array.strides

    @property
    def T(self) -> ndarray:  # noqa: N802 - numpy's name
        """The transposed view."""
        return wrap(self._array.T)

    def __len__(self) -> int:
        return len(self._array)

    def __iter__(self) -> Iterator[Any]:
        return (wrap(row) for row in self._array)

    # ----- indexing -----
    def __getitem__(self, key: Any) -> Any:
        return wrap(self._array[_index(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._array[_index(key)] = _value(value)

    # ----- arithmetic -----
    __add__ = _binary(np.add)
    __radd__ = _binary(np.add, reflected=True)
    __sub__ = _binary(np.subtract)
    __rsub__ = _binary(np.subtract, reflected=True)
    __mul__ = _binary(np.multiply)
    __rmul__ = _binary(np.multiply, reflected=True)
    __truediv__ = _binary(np.true_divide)
    __rtruediv__ = _binary(np.true_divide, reflected=True)
    __floordiv__ = _binary(np.floor_divide)
    __rfloordiv__ = _binary(np.floor_divide, reflected=True)
    __mod__ = _binary(np.remainder)
    __rmod__ = _binary(np.remainder, reflected=True)
    __pow__ = _binary(np.power)
    __rpow__ = _binary(np.power, reflected=True)
    __matmul__ = _binary(np.matmul)
    __rmatmul__ = _binary(np.matmul, reflected=True)
    __and__ = _binary(np.bitwise_and)
    __rand__ = _binary(np.bitwise_and, reflected=True)
    __or__ = _binary(np.bitwise_or)
    __ror__ = _binary(np.bitwise_or, reflected=True)
    __xor__ = _binary(np.bitwise_xor)
    __rxor__ = _binary(np.bitwise_xor, reflected=True)
    __lshift__ = _binary(np.left_shift)
    __rshift__ = _binary(np.right_shift)
    __lt__ = _binary(np.less)
    __le__ = _binary(np.less_equal)
    __gt__ = _binary(np.greater)
    __ge__ = _binary(np.greater_equal)
    __eq__ = _binary(np.equal)
    __ne__ = _binary(np.not_equal)
    __hash__ = None  # type: ignore[assignment]  # unhashable, as cupy's arrays (== is elementwise)
    __iadd__ = _inplace(np.add)
    __isub__ = _inplace(np.subtract)
    __imul__ = _inplace(np.multiply)
    __itruediv__ = _inplace(np.true_divide)
    __ifloordiv__ = _inplace(np.floor_divide)
    __imod__ = _inplace(np.remainder)
    __ipow__ = _inplace(np.power)
    __iand__ = _inplace(np.bitwise_and)
    __ior__ = _inplace(np.bitwise_or)
    __ixor__ = _inplace(np.bitwise_xor)
    __neg__ = _unary(np.negative)
    __pos__ = _unary(np.positive)
    __abs__ = _unary(np.absolute)
    __invert__ = _unary(np.invert)
