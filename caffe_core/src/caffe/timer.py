"""pycaffe's Timer: start(), stop() and the elapsed `ms`, as Caffe's CPU Timer."""

from __future__ import annotations

import logging
import time

log = logging.getLogger("caffe.timer")


class Timer:
    """Wall-clock timer; reading `ms` stops a running timer, as Caffe's MilliSeconds does."""

    def __init__(self) -> None:
        self._running = False
        self._has_run = False
        self._start = 0.0
        self._elapsed_ms = 0.0

    def start(self) -> None:
        """Starts timing (no effect when already running)."""
        if not self._running:
            self._start = time.perf_counter()
            self._running = True
            self._has_run = True

    def stop(self) -> None:
        """Stops timing and records the elapsed time (no effect when not running)."""
        if self._running:
            self._elapsed_ms = (time.perf_counter() - self._start) * 1000.0
            self._running = False

    @property
    def ms(self) -> float:
        """Milliseconds between the last start and stop; 0 (with a warning) if never started."""
        if not self._has_run:
            log.warning("Timer has never been run before reading time.")
            return 0.0
        self.stop()
        return self._elapsed_ms
