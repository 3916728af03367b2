"""Blob: an N-D C-contiguous array of `data` and `diff`, with Caffe's shape rules and serialisation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import numpy.typing as npt

from caffe_core.array_types import Array
from caffe_core.device import CPU, GPU, DeviceBackend, Side
from caffe_core.proto import caffe_pb2
from caffe_core.synced_memory import Head, SyncedMemory

MAX_BLOB_AXES = 32
DTYPE = np.float32


class Blob:
    """Caffe's Blob: shape, lazily allocated data and diff, Reshape with capacity reuse, sharing."""

    def __init__(self, shape: Sequence[int] | None = None, backend: DeviceBackend | None = None) -> None:
        self._shape: tuple[int, ...] = ()
        self._count = 0
        self._capacity = 0
        self._backend = backend
        self._data = SyncedMemory(0, DTYPE, backend)
        self._diff = SyncedMemory(0, DTYPE, backend)
        if shape is not None:
            self.reshape(shape)

    # ----- shape -----
    @overload
    def reshape(self, shape: Sequence[int] | Array, /) -> None: ...
    @overload
    def reshape(self, *shape: int) -> None: ...

    def reshape(self, *dims: Any) -> None:
        """Changes the shape (one sequence, or pycaffe's dims); reallocates only past the capacity."""
        if len(dims) == 1 and not isinstance(dims[0], int | np.integer):
            dims = dims[0]
        shape = tuple(int(d) for d in dims)
        if len(shape) > MAX_BLOB_AXES:
            raise ValueError(f"blob shape {shape} has {len(shape)} axes; at most {MAX_BLOB_AXES} allowed")
        if any(d < 0 for d in shape):
            raise ValueError(f"blob shape {shape} has a negative dimension")
        count = math.prod(shape)
        self._shape = shape
        self._count = count
        if count > self._capacity:
            self._capacity = count
            self._data = SyncedMemory(count, DTYPE, self._backend)
            self._diff = SyncedMemory(count, DTYPE, self._backend)

    def reshape_like(self, other: Blob) -> None:
        """Takes the shape of another blob."""
        self.reshape(other.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape as a tuple."""
        return self._shape

    def shape_at(self, axis: int) -> int:
        """The size of one axis; negative axes count from the end."""
        return self._shape[self.canonical_axis_index(axis)]

    @property
    def num_axes(self) -> int:
        """The number of axes."""
        return len(self._shape)

    @property
    def count(self) -> int:
        """The number of elements."""
        return self._count

    def count_between(self, start: int, end: int | None = None) -> int:
        """The product of the dimensions in [start, end) (end defaults to the last axis)."""
        end = self.num_axes if end is None else end
        if not 0 <= start <= end <= self.num_axes:
            raise ValueError(f"axis range [{start}, {end}) is outside a {self.num_axes}-axis blob")
        return math.prod(self._shape[start:end])

    def canonical_axis_index(self, axis: int) -> int:
        """Maps an axis in [-num_axes, num_axes) to [0, num_axes)."""
        n = self.num_axes
        if not -n <= axis < n:
            raise ValueError(f"axis {axis} out of range for a {n}-axis blob of shape {self._shape}")
        return axis + n if axis < 0 else axis

    def legacy_shape(self, index: int) -> int:
        """Caffe's 4-D accessor: the axis size, or 1 past the blob's axes."""
        if self.num_axes > 4:
            raise ValueError(f"legacy accessors need at most 4 axes; the blob has shape {self._shape}")
        if not -4 <= index < 4:
            raise ValueError(f"legacy axis index {index} is outside [-4, 4)")
        if index >= self.num_axes or index < -self.num_axes:
            return 1
        return self.shape_at(index)

    @property
    def num(self) -> int:
        """Legacy axis 0."""
        return self.legacy_shape(0)

    @property
    def channels(self) -> int:
        """Legacy axis 1."""
        return self.legacy_shape(1)

    @property
    def height(self) -> int:
        """Legacy axis 2."""
        return self.legacy_shape(2)

    @property
    def width(self) -> int:
        """Legacy axis 3."""
        return self.legacy_shape(3)

    def offset(self, *indices: int) -> int:
        """The flat index of a position given by leading indices, each in [0, axis size] as in Caffe."""
        if len(indices) > self.num_axes:
            raise ValueError(f"{len(indices)} indices for a blob of {self.num_axes} axes {self._shape}")
        for axis, index in enumerate(indices):
            if not 0 <= index <= self._shape[axis]:
                raise ValueError(f"index {index} of axis {axis} is outside [0, {self._shape[axis]}] for "
                                 f"shape {self._shape}")
        off = 0
        for axis in range(self.num_axes):
            off *= self._shape[axis]
            if axis < len(indices):
                off += indices[axis]
        return off

    # ----- memory -----
    def _view(self, flat: Array) -> Array:
        return flat[: self._count].reshape(self._shape)

    @property
    def data_memory(self) -> SyncedMemory:
        """The SyncedMemory behind data."""
        return self._data

    @property
    def diff_memory(self) -> SyncedMemory:
        """The SyncedMemory behind diff."""
        return self._diff

    def host_data_current(self) -> bool:
        """Whether reading the host data needs no copy from the device."""
        return self._data.head is not Head.HEAD_AT_GPU

    def cpu_data(self) -> np.ndarray:
        """Data on the host, for reading."""
        return self._view(self._data.cpu_data())

    def mutable_cpu_data(self) -> np.ndarray:
        """Data on the host, for writing."""
        return self._view(self._data.mutable_cpu_data())

    def cpu_diff(self) -> np.ndarray:
        """Diff on the host, for reading."""
        return self._view(self._diff.cpu_data())

    def mutable_cpu_diff(self) -> np.ndarray:
        """Diff on the host, for writing."""
        return self._view(self._diff.mutable_cpu_data())

    def gpu_data(self) -> Array:
        """Data on the device, for reading."""
        return self._view(self._data.gpu_data())

    def mutable_gpu_data(self) -> Array:
        """Data on the device, for writing."""
        return self._view(self._data.mutable_gpu_data())

    def gpu_diff(self) -> Array:
        """Diff on the device, for reading."""
        return self._view(self._diff.gpu_data())

    def mutable_gpu_diff(self) -> Array:
        """Diff on the device, for writing."""
        return self._view(self._diff.mutable_gpu_data())

    def data_on(self, side: Side) -> Array:
        """Data for reading on a side (CPU or GPU)."""
        return self.cpu_data() if side.name == "cpu" else self.gpu_data()

    def mutable_data_on(self, side: Side) -> Array:
        """Data for writing on a side."""
        return self.mutable_cpu_data() if side.name == "cpu" else self.mutable_gpu_data()

    def diff_on(self, side: Side) -> Array:
        """Diff for reading on a side."""
        return self.cpu_diff() if side.name == "cpu" else self.gpu_diff()

    def mutable_diff_on(self, side: Side) -> Array:
        """Diff for writing on a side."""
        return self.mutable_cpu_diff() if side.name == "cpu" else self.mutable_gpu_diff()

    @property
    def data(self) -> np.ndarray:
        """pycaffe's view: a writable numpy array over the host data."""
        return self.mutable_cpu_data()

    @data.setter
    def data(self, value: npt.ArrayLike) -> None:
        self.mutable_cpu_data()[...] = value

    @property
    def diff(self) -> np.ndarray:
        """pycaffe's view: a writable numpy array over the host diff."""
        return self.mutable_cpu_diff()

    @diff.setter
    def diff(self, value: npt.ArrayLike) -> None:
        self.mutable_cpu_diff()[...] = value

    def share_data(self, other: Blob) -> None:
        """Makes this blob's data the very memory of another blob of the same count."""
        if other.count != self._count:
            raise ValueError(f"share_data needs equal counts, got {self._count} and {other.count}")
        self._data = other._data

    def share_diff(self, other: Blob) -> None:
        """Makes this blob's diff the very memory of another blob of the same count."""
        if other.count != self._count:
            raise ValueError(f"share_diff needs equal counts, got {self._count} and {other.count}")
        self._diff = other._diff

    def set_data_memory(self, memory: SyncedMemory) -> None:
        """Makes a buffer of at least this blob's count its data, as the memory planner does."""
        if memory.count < self._count:
            raise ValueError(f"set_data_memory needs at least {self._count} values, got {memory.count}")
        self._data = memory

    # ----- arithmetic -----
    def update(self) -> None:
        """data -= diff, on the side that holds the newest data."""
        if self._data.head is Head.HEAD_AT_GPU or (
            self._data.head is Head.SYNCED and self._diff.head is Head.HEAD_AT_GPU
        ):
            self.mutable_gpu_data()[...] -= self.gpu_diff()
        else:
            self.mutable_cpu_data()[...] -= self.cpu_diff()

    # As Caffe's Blob, these reduce and scale on the device whenever the device copy is current.
    def asum_data(self) -> float:
        """Sum of absolute data values."""
        side = _current_side_of(self._data)
        return float(abs(self.data_on(side).astype(np.float64)).sum()) if self._count else 0.0

    def asum_diff(self) -> float:
        """Sum of absolute diff values."""
        side = _current_side_of(self._diff)
        return float(abs(self.diff_on(side).astype(np.float64)).sum()) if self._count else 0.0

    def sumsq_data(self) -> float:
        """Sum of squared data values."""
        d = self.data_on(_current_side_of(self._data)).astype(np.float64)
        return float((d * d).sum())

    def sumsq_diff(self) -> float:
        """Sum of squared diff values."""
        return float(self.sumsq_diff_on(_current_side_of(self._diff)))

    def sumsq_diff_on(self, side: Side) -> Array:
        """Sum of squared diff values as a 0-d array of the side (no copy between sides)."""
        d = self.diff_on(side).astype(np.float64)
        return (d * d).sum()

    def scale_data(self, factor: float) -> None:
        """Multiplies the data by a scalar."""
        self.mutable_data_on(_current_side_of(self._data))[...] *= DTYPE(factor)

    def scale_diff(self, factor: float) -> None:
        """Multiplies the diff by a scalar."""
        self.mutable_diff_on(_current_side_of(self._diff))[...] *= DTYPE(factor)

    # ----- serialisation -----
    def shape_equals(self, proto: caffe_pb2.BlobProto) -> bool:
        """Whether a stored blob fits this shape, accepting Caffe's legacy 4-D num/channels/height/width."""
        if proto.HasField("shape") or not any(
            proto.HasField(f) for f in ("num", "channels", "height", "width")
        ):
            return tuple(proto.shape.dim) == self._shape
        if self.num_axes > 4:
            return False
        legacy = (proto.num, proto.channels, proto.height, proto.width)
        # A legacy blob is compared from the last axis backwards; missing leading axes must be 1.
        return tuple(legacy) == tuple([1] * (4 - self.num_axes) + list(self._shape))

    def from_proto(self, proto: caffe_pb2.BlobProto, reshape: bool = True) -> None:
        """Loads data (and diff, if stored) from a BlobProto, reshaping or checking the shape."""
        if reshape:
            self.reshape(proto_shape(proto))
        elif not self.shape_equals(proto):
            raise ValueError(f"shape mismatch: stored blob has shape {proto_shape(proto)}, "
                             f"this blob has {self._shape}")
        for values, double_values, target in (
            (proto.data, proto.double_data, self.mutable_cpu_data),
            (proto.diff, proto.double_diff, self.mutable_cpu_diff),
        ):
            source = double_values if len(double_values) else values
            if len(source) == 0:
                continue
            if len(source) != self._count:
                raise ValueError(f"stored blob holds {len(source)} values but its shape "
                                 f"{proto_shape(proto)} needs {self._count}")
            target()[...] = np.asarray(source, dtype=DTYPE).reshape(self._shape)

    def to_proto(self, write_diff: bool = False) -> caffe_pb2.BlobProto:
        """Serialises the blob with an N-D shape, as Caffe's ToProto."""
        proto = caffe_pb2.BlobProto()
        proto.shape.dim.extend(self._shape)
        _append_packed_floats(proto, BLOB_DATA_FIELD, self.cpu_data())
        if write_diff:
            _append_packed_floats(proto, BLOB_DIFF_FIELD, self.cpu_diff())
        return proto

    def __repr__(self) -> str:
        return f"Blob(shape={self._shape})"


BLOB_DATA_FIELD = 5
BLOB_DIFF_FIELD = 6


def _append_packed_floats(proto: caffe_pb2.BlobProto, field_number: int, values: np.ndarray) -> None:
    """Fills a packed float field from raw bytes, far faster than extending it element by element."""
    raw = np.ascontiguousarray(values, dtype="<f4").tobytes()
    if not raw:
        return
    length, prefix = len(raw), bytearray([field_number << 3 | 2])
    while True:
        byte = length & 0x7F
        length >>= 7
        prefix.append(byte | (0x80 if length else 0))
        if not length:
            break
    proto.MergeFromString(bytes(prefix) + raw)


def proto_shape(proto: caffe_pb2.BlobProto) -> tuple[int, ...]:
    """The shape a BlobProto stores: its N-D shape, else its legacy 4-D fields."""
    if proto.HasField("shape"):
        return tuple(int(d) for d in proto.shape.dim)
    if any(proto.HasField(f) for f in ("num", "channels", "height", "width")):
        return (proto.num, proto.channels, proto.height, proto.width)
    return ()


def _current_side_of(memory: SyncedMemory) -> Side:
    """The device when its copy is current (Caffe's SYNCED or HEAD_AT_GPU), else the host."""
    return GPU if memory.head in (Head.HEAD_AT_GPU, Head.SYNCED) else CPU
