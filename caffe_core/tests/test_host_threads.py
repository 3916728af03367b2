"""host_threads: blocks of one pass run side by side on host threads, with the caller's errors and context."""

import os
import threading
import time

import numpy as np
import pytest

from caffe_core import host_threads
from caffe_core.host_threads import (
    MIN_VALUES_PER_THREAD,
    assign,
    even_slices,
    parts_for,
    run_blocks,
    split_over,
)
from caffe_core.openblas import host_blas


@pytest.fixture
def threads(monkeypatch):
    """Sets how many host threads run blocks."""
    def use(count):
        monkeypatch.setenv("CAFFE_HOST_THREADS", str(count))
        host_threads.thread_count.cache_clear()
    yield use
    host_threads.thread_count.cache_clear()


def test_even_slices_cover_the_range_once():
    assert even_slices(10, 3) == [slice(0, 3), slice(3, 6), slice(6, 10)]
    assert even_slices(2, 4) == [slice(0, 1), slice(1, 2)]


def test_parts_follow_the_threads_the_values_and_the_axis(threads):
    threads(4)
    assert parts_for(100 * MIN_VALUES_PER_THREAD, 1000) == 4
    assert parts_for(2 * MIN_VALUES_PER_THREAD, 1000) == 2
    assert parts_for(MIN_VALUES_PER_THREAD - 1, 1000) == 1
    assert parts_for(100 * MIN_VALUES_PER_THREAD, 3) == 3
    threads(1)
    assert parts_for(100 * MIN_VALUES_PER_THREAD, 1000) == 1


def test_the_thread_count_defaults_to_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.delenv("CAFFE_HOST_THREADS", raising=False)
    host_threads.thread_count.cache_clear()
    try:
        assert host_threads.thread_count() == len(os.sched_getaffinity(0))
    finally:
        host_threads.thread_count.cache_clear()


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_thread_count_is_refused_naming_the_variable(threads, value):
    threads(value)
    with pytest.raises(ValueError, match=f"CAFFE_HOST_THREADS must be a whole number .* got '{value}'"):
        host_threads.thread_count()


def test_blocks_run_on_other_threads_and_all_finish_before_the_return(threads):
    threads(3)
    seen, done = set(), []
    barrier = threading.Barrier(3, timeout=10)

    def task(number):
        seen.add(threading.current_thread().name)
        barrier.wait()
        done.append(number)

    run_blocks(np, [lambda n=n: task(n) for n in range(3)])
    assert sorted(done) == [0, 1, 2]
    assert threading.current_thread().name in seen and len(seen) == 3


def test_an_error_in_a_worker_reaches_the_caller_after_every_block_ends(threads):
    threads(2)
    finished = []

    def fails():
        raise KeyError("block 2")

    with pytest.raises(KeyError, match="block 2"):
        run_blocks(np, [lambda: finished.append(1), fails])
    assert finished == [1]


def test_blocks_run_in_the_callers_numpy_error_state(threads):
    threads(2)
    out = np.zeros(2, np.float32)
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            run_blocks(np, [lambda: None, lambda: np.divide(np.ones(1, np.float32), 0, out=out[1:])])


def test_a_block_asking_for_blocks_runs_them_in_its_own_thread(threads):
    threads(2)
    caller, together = threading.current_thread().name, threading.Barrier(2, timeout=10)
    outers, inners = [], []

    def inner(number):
        # Long enough for an idle thread to take the other inner block, were it offered one.
        time.sleep(0.02)
        inners.append((number, threading.current_thread().name))

    def outer(number):
        # Each outer block waits for the other, so that the two run in two threads.
        together.wait()
        outers.append((number, threading.current_thread().name))
        run_blocks(np, [lambda: inner(number), lambda: inner(number)])

    run_blocks(np, [lambda: outer(0), lambda: outer(1)])
    where = dict(outers)
    assert caller in where.values() and len(set(where.values())) == 2
    assert sorted(inners) == sorted([(number, where[number]) for number in (0, 1)] * 2)
    assert parts_for(1 << 30, 2) == 2


def test_products_in_blocks_side_by_side_run_on_one_openblas_thread(threads):
    blas = host_blas()
    if blas.get_threads is None:
        pytest.skip(f"numpy's OpenBLAS cannot be told its thread count here: {blas.detail}")
    threads(2)
    together, counts = threading.Barrier(2, timeout=10), []

    def block():
        together.wait()
        counts.append(blas.get_threads())
        np.ones((64, 64), np.float32) @ np.ones((64, 64), np.float32)

    before = blas.get_threads()
    blas.set_threads(2)
    try:
        run_blocks(np, [block, block])
        after = blas.get_threads()
    finally:
        blas.set_threads(before)
    assert counts == [1, 1] and after == 2


def test_the_caller_takes_tasks_too_and_no_more_threads_start_than_asked(threads):
    def workers():
        return len([thread for thread in threading.enumerate() if thread.name.startswith("caffe-host-")])

    threads(2)
    before, names = workers(), []
    run_blocks(np, [lambda: names.append(threading.current_thread().name) for _ in range(40)])
    assert len(names) == 40
    assert workers() == max(before, 1)


@pytest.mark.parametrize("shape", [(1, 300, 1000), (5, 7, 40000), (300000,)])
def test_assign_copies_every_value_split_or_not(threads, shape):
    threads(2)
    source = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    target = np.zeros(shape[::-1], np.float32).T
    assign(np, target, source)
    np.testing.assert_array_equal(target, source)
    broadcast = np.zeros(shape, np.float32)
    assign(np, broadcast, np.float32(2))
    assert (broadcast == 2).all()


def test_split_over_covers_the_axis_once_on_the_host_and_whole_elsewhere(threads):
    threads(2)
    parts = []
    split_over(np, 10, 10 * MIN_VALUES_PER_THREAD, parts.append)
    assert sorted((p.start, p.stop) for p in parts) == [(0, 5), (5, 10)]
    parts.clear()
    split_over(object(), 10, 10 * MIN_VALUES_PER_THREAD, parts.append)
    assert parts == [slice(None)]


def test_a_forked_child_starts_its_own_workers(threads):
    threads(2)
    run_blocks(np, [lambda: None, lambda: None])
    pid = os.fork()
    if pid == 0:
        out = np.zeros(2)
        try:
            run_blocks(np, [lambda: out.__setitem__(0, 1), lambda: out.__setitem__(1, 1)])
            os._exit(0 if out.sum() == 2 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize(("shape", "parts", "axis"), [
    ((3, 11, 11, 1, 55, 55), 2, 1),  # 2 of 3 channels on one thread is 33% over even; 6 of 11 rows 9%
    ((1, 5, 5, 64, 24, 24), 2, 3),  # the batch; 5 splits 3 + 2
    ((40, 3), 2, 0),
    ((3, 5, 7), 2, 2),  # none within 10% of even: the nearest
    ((3, 5, 7), 3, 0),
])
def test_assign_cuts_the_outermost_axis_that_splits_near_evenly(shape, parts, axis):
    assert host_threads.split_axis(shape, parts) == axis
