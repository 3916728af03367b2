"""openblas: numpy's own OpenBLAS found and called directly, its thread count held at one where asked."""

import threading
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from caffe_core import openblas
from caffe_core.openblas import HostBlas, host_blas, one_blas_thread


@pytest.fixture
def found():
    """numpy's OpenBLAS, two threads allowed for the test (skips where numpy is built on another BLAS)."""
    name = np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    if "openblas" not in name.lower():
        pytest.skip("numpy is not built on OpenBLAS here")
    blas = host_blas()
    before = blas.get_threads()
    blas.set_threads(2)
    yield blas
    blas.set_threads(before)


def test_the_functions_of_the_openblas_numpy_loaded_are_found(found):
    assert found.sgemm is not None, found.detail
    loaded = [info["filepath"] for info in threadpool_info() if info["internal_api"] == "openblas"]
    assert found.library in loaded
    numpy_dir = Path(np.__file__).resolve().parent
    assert Path(found.library).resolve().parent in (numpy_dir.parent / "numpy.libs", numpy_dir / ".dylibs")
    assert found.get_threads() == 2
    counts = [info["num_threads"] for info in threadpool_info() if info["filepath"] == found.library]
    assert counts == [2]


def test_one_blas_thread_inside_and_the_count_restored_after_the_outermost(found):
    with one_blas_thread():
        assert found.get_threads() == 1
        with one_blas_thread():
            assert found.get_threads() == 1
        assert found.get_threads() == 1
    assert found.get_threads() == 2


def test_the_count_comes_back_after_an_error_inside(found):
    with pytest.raises(KeyError), one_blas_thread():
        raise KeyError("inside")
    assert found.get_threads() == 2


def test_the_count_comes_back_only_when_the_last_of_several_threads_leaves(found):
    inside, leave = threading.Barrier(2, timeout=10), threading.Event()
    seen = []

    def hold():
        with one_blas_thread():
            inside.wait()
            leave.wait(10)

    other = threading.Thread(target=hold)
    other.start()
    with one_blas_thread():
        inside.wait()
    seen.append(found.get_threads())
    leave.set()
    other.join(10)
    seen.append(found.get_threads())
    assert seen == [1, 2]


def test_without_openblas_functions_it_changes_nothing(monkeypatch):
    monkeypatch.setattr(openblas, "host_blas", lambda: HostBlas(None, None, "test: no BLAS"))
    with one_blas_thread():
        pass
    assert openblas._limit.inside == 0
