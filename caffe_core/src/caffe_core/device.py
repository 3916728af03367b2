"""The device behind SyncedMemory: a small backend interface, its cupy implementation, and the two sides.

A `Side` says where a layer computes: `CPU` (numpy arrays) or `GPU` (arrays of the device backend). Layers
that run the same array code on both take `side.xp` as their array module. With `CAFFE_GPU_STANDIN=1` the
device is the strict numpy-backed cupy stand-in of `caffe_core.cupy_standin`, which reports its
host<->device copies on stderr when a process that used it exits.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType
from typing import Protocol

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.errors import DeviceError


class DeviceBackend(Protocol):
    """What SyncedMemory needs from a device: allocation and the two copies."""

    xp: ArrayModule

    def zeros(self, count: int, dtype: np.dtype) -> Array:
        """Allocates a zero-filled 1-D device array."""

    def copy_to_device(self, host: np.ndarray, device: Array) -> None:
        """Copies a host array into an existing device array of the same size."""

    def copy_to_host(self, device: Array, host: np.ndarray) -> None:
        """Copies a device array into an existing host array of the same size."""

    def seed(self, seed: int) -> None:
        """Seeds the device random generator."""


STANDIN_SWITCH = "CAFFE_GPU_STANDIN"


def standin_enabled() -> bool:
    """Whether GPU mode runs on the cupy stand-in instead of CUDA."""
    return os.environ.get(STANDIN_SWITCH) == "1"


def cupy_module() -> ModuleType:
    """cupy, or the stand-in when the switch is on; a clear error when neither can be had."""
    if standin_enabled():
        from caffe_core import cupy_standin

        return cupy_standin
    try:
        import cupy
    except ImportError as err:
        raise DeviceError("GPU mode needs cupy: install the GPU extra (pip install 'caffe-core[gpu]'), or "
                          f"set {STANDIN_SWITCH}=1 to run GPU mode on the CPU stand-in") from err
    return cupy


class CupyBackend:
    """A CUDA device driven through cupy (or through the stand-in, which offers the same calls)."""

    def __init__(self, device_id: int) -> None:
        cupy = cupy_module()
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as err:  # cupy raises its own CUDA error types when no driver is present
            raise DeviceError(f"GPU mode needs a CUDA device, but CUDA reports: {err}") from err
        if device_id >= count:
            raise DeviceError(f"device {device_id} requested but only {count} CUDA device(s) present")
        self.xp = cupy
        self.device_id = device_id
        self._device = cupy.cuda.Device(device_id)
        self._device.use()

    def zeros(self, count: int, dtype: np.dtype) -> Array:
        """Allocates a zero-filled 1-D cupy array."""
        with self._device:
            return self.xp.zeros(count, dtype=dtype)

    def copy_to_device(self, host: np.ndarray, device: Array) -> None:
        """Uploads host into device."""
        device.set(host)  # type: ignore[attr-defined]  # a cupy array's upload; Array names numpy's type

    def copy_to_host(self, device: Array, host: np.ndarray) -> None:
        """Downloads device into host."""
        device.get(out=host)  # type: ignore[attr-defined]  # a cupy array's download

    def seed(self, seed: int) -> None:
        """Seeds cupy's generator."""
        with self._device:
            self.xp.random.seed(seed)


@functools.cache
def gpu_backend(device_id: int = 0) -> CupyBackend:
    """Returns the cupy backend of a device, created once."""
    return CupyBackend(device_id)


class Side:
    """Where a computation runs: its name and its array module."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def xp(self) -> ArrayModule:
        """numpy on the CPU side, cupy (or the stand-in) on the GPU side."""
        return np if self.name == "cpu" else cupy_module()

    def __repr__(self) -> str:
        return f"Side({self.name!r})"


CPU = Side("cpu")
GPU = Side("gpu")
