"""Background prefetching: a daemon thread loads batches ahead into a bounded queue.

An error in the thread is handed to the consumer and re-raised in its thread at the next `next()`.
Every prefetcher is stopped when its owner is collected, and all of them at interpreter exit, so a
blocked or failing loader never keeps the process alive.
"""

from __future__ import annotations

import atexit
import queue
import threading
import time
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

from caffe_core.errors import CaffeError

POLL_SECONDS = 0.1
JOIN_SECONDS = 10.0
# At exit the OS reclaims the sources, so a loader still busy is not waited for long.
EXIT_JOIN_SECONDS = 1.0

# What a prefetcher's loader returns; covariant, so that every prefetcher is a Prefetcher[object].
Item = TypeVar("Item", covariant=True)

_live: weakref.WeakSet[Prefetcher[object]] = weakref.WeakSet()


class _Failure:
    """An exception raised by the loader, carried through the queue."""

    def __init__(self, error: BaseException) -> None:
        self.error = error


class Prefetcher(Generic[Item]):
    """Calls `load()` in a thread, keeping up to `depth` results ready; `close()` stops it."""

    def __init__(self, load: Callable[[], Item], depth: int, name: str,
                 on_close: Callable[[], None] | None = None) -> None:
        self.name = name
        self._load = load
        self._queue: queue.Queue[Item | _Failure] = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._on_close = on_close
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"prefetch {name}", daemon=True)
        _live.add(self)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item: Item | _Failure = self._load()
            except BaseException as err:  # handed to the consumer thread, which re-raises it
                item = _Failure(err)
            while not self._stop.is_set():
                try:
                    self._queue.put(item, timeout=POLL_SECONDS)
                    break
                except queue.Full:
                    continue
            if isinstance(item, _Failure):
                return

    def next(self) -> Item:
        """The next loaded item; re-raises the loader's error."""
        if self._closed:
            raise CaffeError(f"{self.name}: prefetching was stopped")
        while True:
            try:
                item = self._queue.get(timeout=POLL_SECONDS)
                break
            except queue.Empty:
                if not self._thread.is_alive() and self._queue.empty():
                    raise CaffeError(f"{self.name}: the prefetch thread stopped unexpectedly") from None
        if isinstance(item, _Failure):
            self.close()
            raise item.error
        return item

    def close(self, timeout: float = JOIN_SECONDS) -> None:
        """Stops the thread, waits up to `timeout` for it, and then releases the loader's resources."""
        if self._closed:
            return
        self._closed = True
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        while not self._queue.empty():
            self._queue.get_nowait()
        if self._on_close is not None and not self._thread.is_alive():
            self._on_close()


def stop_all() -> None:
    """Stops every live prefetcher (run at interpreter exit), all threads in parallel."""
    prefetchers = list(_live)
    for prefetcher in prefetchers:
        prefetcher._stop.set()
    deadline = time.monotonic() + EXIT_JOIN_SECONDS
    for prefetcher in prefetchers:
        prefetcher.close(max(0.0, deadline - time.monotonic()))


atexit.register(stop_all)
