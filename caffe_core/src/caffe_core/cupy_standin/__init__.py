"""A strict cupy stand-in on numpy, so that every GPU code path runs, and is checked, without CUDA.

Switched on by `CAFFE_GPU_STANDIN=1`: GPU mode then drives this module as it would drive cupy. It offers
only the part of cupy's API the project uses, with cupy's semantics and cupy's refusals (see `array`), and
anything else fails loudly. Every host<->device copy and every device allocation is counted in `LEDGER`.
"""

from __future__ import annotations

import atexit
import types
from typing import Any

import numpy as np

from caffe_core.cupy_standin import device
from caffe_core.cupy_standin import random as random  # noqa: PLC0414 - cupy.random
from caffe_core.cupy_standin.array import StandinUnsupported, missing, ndarray
from caffe_core.cupy_standin.functions import (
    DEVICE_FUNCTIONS,
    UFUNCS,
    asarray,
    ascontiguousarray,
    asnumpy,
    device_function,
    ufunc,
)
from caffe_core.cupy_standin.ledger import LEDGER, Memory, Transfers
from caffe_core.cupy_standin.strides import as_strided

cuda = device.cuda
lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=as_strided))

float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint32, uint64, bool_, intp = np.uint8, np.uint32, np.uint64, np.bool_, np.intp
newaxis, inf, nan, pi = np.newaxis, np.inf, np.nan, np.pi

_functions = {name: device_function(name) for name in DEVICE_FUNCTIONS}
_ufuncs = {name: ufunc(name) for name in UFUNCS}
globals().update(_functions)
globals().update(_ufuncs)


def transfers() -> Transfers:
    """Host<->device copies counted since the process started."""
    return LEDGER.transfers()


def memory() -> Memory:
    """Device bytes in use now and at the peak."""
    return LEDGER.memory()


atexit.register(LEDGER.print_report)


def __getattr__(name: str) -> Any:
    raise missing("cupy", name)


__all__ = [
    "LEDGER", "Memory", "StandinUnsupported", "Transfers", "ascontiguousarray", "asarray", "asnumpy", "cuda",
    "lib", "memory", "ndarray", "random", "transfers", "ufunc",
] + list(DEVICE_FUNCTIONS) + list(UFUNCS)  # not `*NAME`, which documentation tools read as NAME's own __all__
