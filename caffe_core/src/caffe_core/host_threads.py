"""Host threads for memory-bound array work: a layer's copies and elementwise passes on every core.

numpy releases the GIL inside its copies and ufunc loops, so blocks of one pass that write disjoint parts
of their outputs run at the same time on threads. Caffe runs such passes (im2col, col2im, pooling) on one
core; only its matrix products use the others.

CAFFE_HOST_THREADS sets the number of threads (the caller's included); by default, the cores this process
may run on. A task that itself asks for blocks to be run runs them all in its own thread. While blocks run
side by side, a matrix product in one of them runs on its own thread alone (openblas.one_blas_thread).
"""

from __future__ import annotations

import collections
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.openblas import one_blas_thread

# Handing a block to another thread costs about as much as copying this many float32 values.
MIN_VALUES_PER_THREAD = 1 << 16
# assign cuts an array along an axis whose longest block is at most this much longer than an even share.
EVEN_SPLIT_EXCESS = 1.1

_local = threading.local()


@functools.cache
def thread_count() -> int:
    """How many threads run blocks (CAFFE_HOST_THREADS, or the cores this process may run on)."""
    wanted = os.environ.get("CAFFE_HOST_THREADS", "").strip()
    if wanted:
        if not wanted.isdigit() or int(wanted) < 1:
            raise ValueError(f"CAFFE_HOST_THREADS must be a whole number of threads, 1 or more; "
                             f"got {wanted!r}")
        return int(wanted)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def parts_for(values: int, limit: int) -> int:
    """Into how many blocks a pass over `values` values is worth cutting, at most `limit` (an axis length)."""
    if getattr(_local, "in_worker", False):
        return 1
    return max(1, min(thread_count(), limit, values // MIN_VALUES_PER_THREAD))


def even_slices(length: int, parts: int) -> list[slice]:
    """`parts` contiguous slices of range(length), their lengths differing by at most one."""
    bounds = [length * part // parts for part in range(parts + 1)]
    return [slice(start, stop) for start, stop in zip(bounds, bounds[1:], strict=False) if stop > start]


def run_blocks(xp: ArrayModule, tasks: Sequence[Callable[[], object]]) -> None:
    """Runs the tasks and returns once all have finished, raising any task's error: on the host side by side,
    the caller's thread among those taking them; for a device one after another in the caller's thread."""
    if xp is not np or len(tasks) == 1 or thread_count() == 1 or getattr(_local, "in_worker", False):
        for task in tasks:
            task()
        return
    # Each task in the caller's context, so that its np.errstate (a context variable) holds there too.
    batch = _Batch([functools.partial(contextvars.copy_context().run, task) for task in tasks])
    helpers = min(len(tasks), thread_count()) - 1
    work = _pool(helpers)
    with one_blas_thread():
        for _ in range(helpers):
            work.put(batch)
        _local.in_worker = True
        try:
            batch.work()
        finally:
            _local.in_worker = False
        batch.done.wait()
    if batch.error is not None:
        raise batch.error


def split_over(xp: ArrayModule, length: int, values: int, block: Callable[[slice], object]) -> None:
    """Runs block(s) for slices s of range(length) covering it: on the host in as many threads as `values`
    (the values the whole pass moves) makes worth it, on a device once with s = slice(None)."""
    if xp is not np:
        block(slice(None))
        return
    parts = even_slices(length, parts_for(values, length))
    run_blocks(xp, [functools.partial(block, part) for part in parts])


def assign(xp: ArrayModule, target: Array, source: Array) -> None:
    """target[...] = source; on the host in blocks of target's outermost axis long enough to share."""
    parts = parts_for(target.size, max(target.shape, default=1)) if xp is np else 1
    if parts == 1:
        target[...] = source
        return
    axis = split_axis(target.shape, parts)
    source = np.broadcast_to(source, target.shape)

    def block(part: slice) -> None:
        where = (slice(None),) * axis + (part,)
        target[where] = source[where]

    run_blocks(xp, [functools.partial(block, part) for part in even_slices(target.shape[axis], parts)])


def split_axis(shape: Sequence[int], parts: int) -> int:
    """The axis assign cuts into `parts` blocks: the outermost whose longest block is within
    EVEN_SPLIT_EXCESS of an even share, else the most even (3 input channels cut in two would leave one
    thread twice the other's work)."""
    def excess(axis: int) -> float:
        # Every axis near enough to even ranks alike, so min keeps the outermost of them.
        return max(-(-shape[axis] // parts) * parts / shape[axis], EVEN_SPLIT_EXCESS)

    return min((axis for axis, length in enumerate(shape) if length >= parts), key=excess)


class _Batch:
    """One run_blocks call's host tasks: those not yet taken, how many are unfinished, the first error."""

    def __init__(self, tasks: list[Callable[[], object]]) -> None:
        self.pending = collections.deque(tasks)
        self.left = len(tasks)
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.error: BaseException | None = None

    def work(self) -> None:
        """Takes and runs this batch's tasks until none is left to take."""
        while True:
            try:
                task = self.pending.popleft()
            except IndexError:
                return
            try:
                task()
            except BaseException as err:  # noqa: BLE001 - handed to the caller of run_blocks
                self.error = self.error or err
            finally:
                with self.lock:
                    self.left -= 1
                    if self.left == 0:
                        self.done.set()


class _Workers:
    """Daemon threads that help with the batches put in one queue."""

    def __init__(self) -> None:
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.count = 0

    def grow(self, count: int) -> None:
        while self.count < count:
            threading.Thread(target=self._serve, name=f"caffe-host-{self.count}", daemon=True).start()
            self.count += 1

    def put(self, batch: _Batch) -> None:
        self.queue.put(batch)

    def _serve(self) -> None:
        _local.in_worker = True
        while True:
            self.queue.get().work()


_workers: _Workers | None = None
_workers_lock = threading.Lock()


def _pool(count: int) -> _Workers:
    global _workers
    with _workers_lock:
        if _workers is None:
            _workers = _Workers()
        _workers.grow(count)
        return _workers


def _forget_workers() -> None:
    # A forked child has none of its parent's threads, and no thread of it holds the lock.
    global _workers, _workers_lock
    _workers = None
    _workers_lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_workers)
