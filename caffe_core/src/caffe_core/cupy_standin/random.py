"""cupy.random on the stand-in: the seed call the project makes, and nothing else."""

from __future__ import annotations

from typing import Any

from caffe_core.cupy_standin.array import missing


def seed(seed: int | None = None) -> None:
    """Seeds the device generator (the project draws its random numbers on the host)."""


def __getattr__(name: str) -> Any:
    raise missing("cupy.random", name)
