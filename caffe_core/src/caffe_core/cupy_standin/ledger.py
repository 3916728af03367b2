"""The stand-in's books: copies and bytes each way between host and device, and device memory in use."""

from __future__ import annotations

import dataclasses
import sys
import weakref

import numpy as np


@dataclasses.dataclass(frozen=True)
class Transfers:
    """Copies (and their bytes) host->device and device->host since the process started."""

    to_device: int = 0
    to_device_bytes: int = 0
    to_host: int = 0
    to_host_bytes: int = 0

    def __sub__(self, earlier: Transfers) -> Transfers:
        return Transfers(*(a - b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(earlier),
                                                  strict=True)))

    @property
    def copies(self) -> int:
        """Copies either way."""
        return self.to_device + self.to_host


@dataclasses.dataclass(frozen=True)
class Memory:
    """Device bytes held by live arrays now, and the most ever held at once."""

    current_bytes: int
    peak_bytes: int


class Ledger:
    """Counts every explicit copy and every device allocation of the stand-in."""

    def __init__(self) -> None:
        self._transfers = Transfers()
        self._current = 0
        self._peak = 0
        self._owners: dict[int, weakref.finalize] = {}

    def copied_to_device(self, nbytes: int) -> None:
        """Records one host->device copy."""
        t = self._transfers
        self._transfers = dataclasses.replace(t, to_device=t.to_device + 1,
                                              to_device_bytes=t.to_device_bytes + int(nbytes))

    def copied_to_host(self, nbytes: int) -> None:
        """Records one device->host copy."""
        t = self._transfers
        self._transfers = dataclasses.replace(t, to_host=t.to_host + 1,
                                              to_host_bytes=t.to_host_bytes + int(nbytes))

    def transfers(self) -> Transfers:
        """The copies counted so far."""
        return self._transfers

    def memory(self) -> Memory:
        """Device memory now and at its peak."""
        return Memory(self._current, self._peak)

    def reset_peak(self) -> None:
        """Starts peak accounting again from the memory in use now."""
        self._peak = self._current

    def hold(self, array: np.ndarray) -> None:
        """Accounts the buffer behind a device array once, until the buffer is freed."""
        owner = array
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        key = id(owner)
        if key in self._owners:
            return
        nbytes = owner.nbytes
        self._current += nbytes
        self._peak = max(self._peak, self._current)
        self._owners[key] = weakref.finalize(owner, self._release, key, nbytes)

    def _release(self, key: int, nbytes: int) -> None:
        self._current -= nbytes
        self._owners.pop(key, None)

    def report(self) -> str:
        """The one-line summary printed at exit."""
        t = self._transfers
        return (f"GPU stand-in transfers: host->device {t.to_device} ({t.to_device_bytes} bytes), "
                f"device->host {t.to_host} ({t.to_host_bytes} bytes)")

    def print_report(self) -> None:
        """Writes the summary line to stderr."""
        print(self.report(), file=sys.stderr, flush=True)


LEDGER = Ledger()
