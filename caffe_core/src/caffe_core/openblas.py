"""numpy's own OpenBLAS, called directly: its cblas_sgemm, and its thread count held at one where needed.

A product made on one of the host threads must run on that thread alone. Were OpenBLAS to share it out,
its threads would serve several callers at once: on a 2-core machine without OpenBLAS's small-matrix kernel
(AVX2 CPUs) that turned LeNet conv1's backward from 2 ms into 70-130 ms. OpenBLAS keeps one thread count
for the whole process, so `one_blas_thread` sets it to one while any caller is inside and restores it after
the last one leaves.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_info


@dataclass(frozen=True)
class HostBlas:
    """numpy's OpenBLAS functions when they can be called directly; `detail` says which, or why not."""

    sgemm: Any
    library: str | None
    detail: str
    set_threads: Any = None
    get_threads: Any = None


@functools.cache
def host_blas() -> HostBlas:
    """Finds numpy's OpenBLAS and its functions, once per process (threadpoolctl names the file)."""
    name = np.show_config(mode="dicts").get("Build Dependencies", {}).get("blas", {}).get("name", "")
    if "openblas" not in name.lower():
        return HostBlas(None, None, f"numpy was built against {name or 'no BLAS'}, not OpenBLAS")
    libraries = [info["filepath"] for info in threadpool_info() if info.get("internal_api") == "openblas"]
    if len(libraries) > 1:
        numpy_dir = Path(np.__file__).resolve().parent
        libraries = [path for path in libraries if _bundled_with(numpy_dir, Path(path).resolve())]
    if len(libraries) != 1:
        return HostBlas(None, None, f"cannot tell numpy's OpenBLAS among the loaded libraries {libraries}")
    path = libraries[0]
    try:
        library = ctypes.CDLL(path, mode=os.RTLD_LAZY | getattr(os, "RTLD_NOLOAD", 0))
    except OSError as err:
        return HostBlas(None, path, f"cannot open numpy's OpenBLAS {path}: {err}")
    for prefix, suffix in itertools.product(("scipy_", ""), ("64_", "_64", "")):
        sgemm = getattr(library, f"{prefix}cblas_sgemm{suffix}", None)
        config = getattr(library, f"{prefix}openblas_get_config{suffix}", None)
        if sgemm is not None and config is not None:
            break
    else:
        return HostBlas(None, path, f"{path} exports no cblas_sgemm with openblas_get_config")
    config.restype = ctypes.c_char_p
    integer = ctypes.c_int64 if b"USE64BITINT" in config() else ctypes.c_int32
    sgemm.restype = None
    sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, integer, integer, integer, ctypes.c_float,
                      ctypes.c_void_p, integer, ctypes.c_void_p, integer, ctypes.c_float, ctypes.c_void_p,
                      integer]
    # The thread count's functions take and give a C int whatever the integer width of the BLAS calls.
    set_threads = getattr(library, f"{prefix}openblas_set_num_threads{suffix}")
    set_threads.argtypes, set_threads.restype = [ctypes.c_int], None
    get_threads = getattr(library, f"{prefix}openblas_get_num_threads{suffix}")
    get_threads.argtypes, get_threads.restype = [], ctypes.c_int
    return HostBlas(sgemm, path, f"{sgemm.__name__} of {path}", set_threads, get_threads)


class _ThreadLimit:
    """How many callers are inside one_blas_thread, and the thread count to restore when none is."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.restore = 1


_limit = _ThreadLimit()


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Inside, numpy's OpenBLAS runs each call on its caller's thread alone (where it can be told to)."""
    blas = host_blas()
    if blas.set_threads is None:
        yield
        return
    with _limit.lock:
        if _limit.inside == 0:
            _limit.restore = blas.get_threads()
            if _limit.restore != 1:
                blas.set_threads(1)
        _limit.inside += 1
    try:
        yield
    finally:
        with _limit.lock:
            _limit.inside -= 1
            if _limit.inside == 0 and _limit.restore != 1:
                blas.set_threads(_limit.restore)


def _forget_limit() -> None:
    # A forked child has none of its parent's threads, so none of them is inside one_blas_thread.
    global _limit
    _limit = _ThreadLimit()


os.register_at_fork(after_in_child=_forget_limit)


def _bundled_with(numpy_dir: Path, library: Path) -> bool:
    """Whether a library ships inside numpy's wheel (numpy.libs/ beside the package, or in the package)."""
    return library.is_relative_to(numpy_dir) or library.parent == numpy_dir.parent / "numpy.libs"
