"""Grow-only scratch arrays kept on a layer, so repeated forward/backward calls reuse their memory."""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable, Sequence
from typing import TypeGuard

import numpy as np
import numpy.typing as npt

from caffe_core.array_types import Array, ArrayModule

# Scratch one convolution call may hold (columns, products, padded inputs): a larger batch is processed in
# chunks of images. On CaffeNet (batch 10), 16 MiB chunks slow conv2-5 by up to 5%, 64 MiB ones gain nothing
# over 32 MiB; only conv2's whole batch (80 MiB) runs its backward 5% faster.
SCRATCH_BUDGET_BYTES = 32 * 2**20

# Carved arrays start on 64-byte boundaries, as BLAS and SIMD loops prefer.
_ALIGN = 16


class Workspace:
    """Named scratch arrays (float32 unless asked); a name is reallocated only when a call needs more room."""

    def __init__(self) -> None:
        self._flat: dict[str, Array] = {}
        self._border: dict[str, tuple[tuple[int, ...], float, object]] = {}
        self._constants: dict[str, tuple[object, Array]] = {}
        self._contents: dict[str, object] = {}

    def array(self, xp: ArrayModule, name: str, shape: tuple[int, ...],
              dtype: npt.DTypeLike = np.float32) -> Array:
        """An uninitialised array of this shape (a view of the named buffer)."""
        self._contents.pop(name, None)
        count = math.prod(shape)
        flat = self._flat.get(name)
        if not _has_room(flat, xp, count, dtype):
            flat = xp.empty(max(count, 1), dtype=dtype)
            self._flat[name] = flat
            self._border.pop(name, None)
        return flat[:count].reshape(shape)

    def arrays(self, xp: ArrayModule, name: str, shapes: Sequence[tuple[int, ...]],
               contents: object = None) -> list[Array]:
        """Uninitialised float32 arrays of these shapes, carved one after another from one named buffer;
        `contents` names what the caller will leave in them, for `holds` to answer until the next carve."""
        counts = [_aligned(math.prod(shape)) for shape in shapes]
        flat = self.array(xp, name, (sum(counts),))
        if contents is not None:
            self._contents[name] = contents
        starts = itertools.accumulate(counts, initial=0)
        return [flat[start:start + math.prod(shape)].reshape(shape)
                for start, shape in zip(starts, shapes, strict=False)]

    def holds(self, xp: ArrayModule, name: str, shapes: Sequence[tuple[int, ...]], contents: object) -> bool:
        """Whether carving these shapes from the named buffer would find `contents` there: its last carver
        said it would leave them, and the buffer needs no reallocation."""
        count = sum(_aligned(math.prod(shape)) for shape in shapes)
        return (name in self._contents and self._contents[name] == contents
                and _has_room(self._flat.get(name), xp, count, np.float32))

    def zeros(self, xp: ArrayModule, name: str, shape: tuple[int, ...]) -> Array:
        """A zero-filled array of this shape."""
        out = self.array(xp, name, shape)
        out.fill(0)
        self._border.pop(name, None)
        return out

    def bordered(self, xp: ArrayModule, name: str, shape: tuple[int, ...], fill: float = 0.0,
                 inner: object = None) -> Array:
        """An array filled when first used with this shape, fill and `inner` (the region callers rewrite)."""
        out = self.array(xp, name, shape)
        if self._border.get(name) != (shape, fill, inner):
            out.fill(fill)
            self._border[name] = (shape, fill, inner)
        return out

    def constant(self, xp: ArrayModule, name: str, key: object, make: Callable[[], Array]) -> Array:
        """Host values `make()` on xp's side, built (and copied to a device) once per `key`."""
        kept = self._constants.get(name)
        if kept is None or kept[0] != key or not isinstance(kept[1], xp.ndarray):
            kept = (key, xp.asarray(make()))
            self._constants[name] = kept
        return kept[1]

    def nbytes(self) -> int:
        """Bytes held by all buffers."""
        return sum(int(flat.nbytes) for flat in self._flat.values())


def carved_bytes(shapes: Sequence[tuple[int, ...]]) -> int:
    """The bytes `Workspace.arrays` needs for float32 arrays of these shapes."""
    return 4 * sum(_aligned(math.prod(shape)) for shape in shapes)


def _has_room(flat: Array | None, xp: ArrayModule, count: int, dtype: npt.DTypeLike) -> TypeGuard[Array]:
    """Whether a buffer can serve `count` values of `dtype` on xp's side without being reallocated."""
    return flat is not None and isinstance(flat, xp.ndarray) and flat.dtype == dtype and flat.size >= count


def _aligned(count: int) -> int:
    return -(-count // _ALIGN) * _ALIGN


_per_thread = threading.local()


def shared_scratch() -> Workspace:
    """This thread's workspace for buffers that live only within one layer call, shared by every layer."""
    scratch = getattr(_per_thread, "scratch", None)
    if scratch is None:
        scratch = _per_thread.scratch = Workspace()
    return scratch
