"""Bit-exact comparisons that hold where the arithmetic is Caffe's CPU arithmetic, and ulps on a real GPU.

On the CPU and on the cupy stand-in (numpy underneath) a layer that adds in Caffe's order gives Caffe's bits.
A CUDA device contracts multiply-adds into FMAs and has its own exp, log and reduction trees, as Caffe's own
GPU kernels do, so there the same results agree within a few float32 ulps instead.
"""

from __future__ import annotations

import numpy as np

from caffe_core import runtime
from caffe_core.array_types import Array
from caffe_core.device import standin_enabled

DEVICE_ULPS = 4


def on_cuda_device() -> bool:
    """Whether layers now run on a real CUDA device (GPU mode, stand-in off)."""
    return runtime.mode() == runtime.GPU_MODE and not standin_enabled()


def device_tolerance() -> float:
    """The relative tolerance a bit-exact comparison gets in the current mode: 0, or DEVICE_ULPS ulps."""
    return DEVICE_ULPS * float(np.finfo(np.float32).eps) if on_cuda_device() else 0.0


def assert_caffe_equal(actual: Array | float, desired: Array | float, err_msg: str = "") -> None:
    """Bit-equal, except on a CUDA device: there within DEVICE_ULPS ulps of the largest |desired|."""
    tolerance = device_tolerance()
    if tolerance == 0.0:
        np.testing.assert_array_equal(actual, desired, err_msg=err_msg)
        return
    scale = float(np.abs(np.asarray(desired, dtype=np.float64)).max(initial=0.0))
    np.testing.assert_allclose(actual, desired, rtol=0.0, atol=tolerance * scale, err_msg=err_msg)
