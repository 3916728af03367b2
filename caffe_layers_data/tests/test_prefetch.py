"""Prefetcher: batches in order, errors re-raised in the consumer, no hang on error, close or exit."""

from __future__ import annotations

import itertools
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable

import pytest

from caffe_core.errors import CaffeError
from caffe_layers_data import prefetch
from caffe_layers_data.prefetch import Prefetcher


def _within(seconds: float, call: Callable[[], object]) -> BaseException | None:
    """Runs `call` in a helper thread and returns what it raised; fails the test if it is still running."""
    raised: list[BaseException | None] = [None]

    def target() -> None:
        try:
            call()
        except BaseException as err:
            raised[0] = err

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return raised[0]


def test_items_arrive_in_order():
    counter = itertools.count()
    prefetcher = Prefetcher(lambda: next(counter), 3, "t")
    assert [prefetcher.next() for _ in range(5)] == [0, 1, 2, 3, 4]
    prefetcher.close()


def test_loader_error_is_raised_by_next_in_the_caller_without_hanging():
    def load():
        raise CaffeError("record 'k' is bad")

    prefetcher = Prefetcher(load, 2, "t")
    first = _within(2, prefetcher.next)
    assert isinstance(first, CaffeError) and "record 'k' is bad" in str(first)
    second = _within(2, prefetcher.next)
    assert isinstance(second, CaffeError) and "t: prefetching was stopped" in str(second)


def test_close_stops_a_thread_blocked_on_a_full_queue_and_releases_the_source():
    released = threading.Event()
    prefetcher = Prefetcher(lambda: 1, 1, "t", on_close=released.set)
    time.sleep(0.05)
    start = time.perf_counter()
    prefetcher.close()
    assert time.perf_counter() - start < 2 and released.is_set()
    assert not any(t.name == "prefetch t" and t.is_alive() for t in threading.enumerate())


@pytest.mark.parametrize("loader", ["lambda: 1", "threading.Event().wait"])
def test_interpreter_exits_promptly_with_a_live_prefetcher(loader):
    script = ("import threading\nfrom caffe_layers_data.prefetch import Prefetcher\n"
              f"p = Prefetcher({loader}, 1, 't')\nprint('started', flush=True)\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stdout == "started\n", done.stderr
    assert time.perf_counter() - start < 8


def test_stop_all_closes_every_live_prefetcher_and_releases_its_source(monkeypatch):
    released = threading.Event()
    prefetcher = Prefetcher(lambda: 1, 1, "t", on_close=released.set)
    monkeypatch.setattr(prefetch, "_live", weakref.WeakSet([prefetcher]))
    assert _within(2, prefetch.stop_all) is None
    assert released.is_set()
    with pytest.raises(CaffeError, match="t: prefetching was stopped"):
        prefetcher.next()
