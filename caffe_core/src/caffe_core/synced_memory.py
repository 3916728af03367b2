"""SyncedMemory: a host and a device copy of one buffer, copied only when the other side is stale."""

from __future__ import annotations

import enum
import itertools

import numpy as np
import numpy.typing as npt

from caffe_core.array_types import Array
from caffe_core.device import DeviceBackend

# Versions are unique across all buffers, so a version alone names one buffer's contents between writes.
_versions = itertools.count(1)


class Head(enum.Enum):
    """Which copy is current, as Caffe's SyncedHead."""

    UNINITIALIZED = 0
    HEAD_AT_CPU = 1
    HEAD_AT_GPU = 2
    SYNCED = 3


class SyncedMemory:
    """A lazily allocated 1-D buffer of `count` elements mirrored between host (numpy) and device."""

    def __init__(self, count: int, dtype: npt.DTypeLike = np.float32,
                 backend: DeviceBackend | None = None) -> None:
        self.count = int(count)
        self.dtype = np.dtype(dtype)
        self._backend = backend
        self._cpu: np.ndarray | None = None
        self._gpu: Array | None = None
        self.head = Head.UNINITIALIZED
        self.version = next(_versions)

    @property
    def backend(self) -> DeviceBackend:
        """The device backend: the one given, else the cupy device of the current runtime."""
        if self._backend is None:
            from caffe_core import runtime
            from caffe_core.device import gpu_backend

            self._backend = gpu_backend(runtime.device_id())
        return self._backend

    def _to_cpu(self) -> np.ndarray:
        if self.head is Head.UNINITIALIZED:
            self._cpu = np.zeros(self.count, dtype=self.dtype)
            self.head = Head.HEAD_AT_CPU
        elif self.head is Head.HEAD_AT_GPU:
            if self._cpu is None:
                self._cpu = np.empty(self.count, dtype=self.dtype)
            assert self._gpu is not None  # the device copy is the current one
            self.backend.copy_to_host(self._gpu, self._cpu)
            self.head = Head.SYNCED
        assert self._cpu is not None  # set above, or earlier: HEAD_AT_CPU and SYNCED memory has it
        return self._cpu

    def _to_gpu(self) -> Array:
        if self.head is Head.UNINITIALIZED:
            self._gpu = self.backend.zeros(self.count, self.dtype)
            self.head = Head.HEAD_AT_GPU
        elif self.head is Head.HEAD_AT_CPU:
            if self._gpu is None:
                self._gpu = self.backend.zeros(self.count, self.dtype)
            assert self._cpu is not None  # the host copy is the current one
            self.backend.copy_to_device(self._cpu, self._gpu)
            self.head = Head.SYNCED
        assert self._gpu is not None  # set above, or earlier: HEAD_AT_GPU and SYNCED memory has it
        return self._gpu

    def cpu_data(self) -> np.ndarray:
        """The host copy for reading; copies from the device only if the device side changed."""
        return self._to_cpu()

    def gpu_data(self) -> Array:
        """The device copy for reading; copies from the host only if the host side changed."""
        return self._to_gpu()

    def mutable_cpu_data(self) -> np.ndarray:
        """The host copy for writing; the device copy becomes stale."""
        cpu = self._to_cpu()
        self.head = Head.HEAD_AT_CPU
        self.version = next(_versions)
        return cpu

    def mutable_gpu_data(self) -> Array:
        """The device copy for writing; the host copy becomes stale."""
        gpu = self._to_gpu()
        self.head = Head.HEAD_AT_GPU
        self.version = next(_versions)
        return gpu

    def set_cpu_data(self, array: np.ndarray) -> None:
        """Adopts an existing host array of `count` elements as the host copy."""
        if array.size != self.count or array.dtype != self.dtype:
            raise ValueError(f"set_cpu_data needs {self.count} {self.dtype} elements, got {array.size} "
                             f"{array.dtype}")
        self._cpu = array.reshape(-1)
        self.head = Head.HEAD_AT_CPU
        self.version = next(_versions)

    def set_gpu_data(self, array: Array) -> None:
        """Adopts an existing device array of `count` elements as the device copy."""
        if array.size != self.count or array.dtype != self.dtype:
            raise ValueError(f"set_gpu_data needs {self.count} {self.dtype} elements, got {array.size} "
                             f"{array.dtype}")
        self._gpu = array.reshape(-1)
        self.head = Head.HEAD_AT_GPU
        self.version = next(_versions)
