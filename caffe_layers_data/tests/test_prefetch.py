"""Prefetcher: batches in order, errors re-raised in the consumer, no hang on close."""

from __future__ import annotations

import itertools
import threading
import time

import pytest

from caffe_core.errors import CaffeError
from caffe_layers_data.prefetch import Prefetcher


def test_items_arrive_in_order():
    counter = itertools.count()
    prefetcher = Prefetcher(lambda: next(counter), 3, "t")
    assert [prefetcher.next() for _ in range(5)] == [0, 1, 2, 3, 4]
    prefetcher.close()


def test_loader_error_is_raised_by_next_in_the_caller():
    def load():
        raise CaffeError("record 'k' is bad")

    prefetcher = Prefetcher(load, 2, "t")
    with pytest.raises(CaffeError, match="record 'k' is bad"):
        prefetcher.next()
    with pytest.raises(CaffeError, match="prefetching was stopped"):
        prefetcher.next()


def test_close_stops_a_thread_blocked_on_a_full_queue_and_releases_the_source():
    released = threading.Event()
    prefetcher = Prefetcher(lambda: 1, 1, "t", on_close=released.set)
    time.sleep(0.05)
    start = time.perf_counter()
    prefetcher.close()
    assert time.perf_counter() - start < 2 and released.is_set()
    assert not any(t.name == "prefetch t" and t.is_alive() for t in threading.enumerate())
