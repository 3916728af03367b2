"""cupy.cuda on the stand-in: two devices (so that multi-GPU paths run), usable as context managers."""

from __future__ import annotations

import os
import types
from typing import Any

DEVICE_COUNT = 2


class Device:
    """cupy.cuda.Device for one of the stand-in's devices."""

    def __init__(self, device: int = 0) -> None:
        if not 0 <= int(device) < DEVICE_COUNT:
            raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {device} (the stand-in has "
                               f"{DEVICE_COUNT} devices)")
        self.id = int(device)

    def use(self) -> None:
        """Makes this the current device."""

    def __enter__(self) -> Device:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def get_device_count() -> int:
    """The stand-in's device count."""
    return DEVICE_COUNT


def get_device_properties(device: int) -> dict[str, Any]:
    """cudaDeviceProp's fields as cupy returns them, describing the stand-in (host memory, no SMs)."""
    Device(device)
    return {
        "name": b"cupy stand-in (numpy on the CPU)", "major": 0, "minor": 0,
        "totalGlobalMem": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "sharedMemPerBlock": 0,
        "regsPerBlock": 0, "warpSize": 1, "memPitch": 0, "maxThreadsPerBlock": 1, "maxThreadsDim": (1, 1, 1),
        "maxGridSize": (1, 1, 1), "clockRate": 0, "totalConstMem": 0, "textureAlignment": 0,
        "deviceOverlap": 0, "multiProcessorCount": 0, "kernelExecTimeoutEnabled": 0,
    }


cuda = types.SimpleNamespace(Device=Device, runtime=types.SimpleNamespace(
    getDeviceCount=get_device_count, getDeviceProperties=get_device_properties))
