"""pycaffe's multi-process settings: solver count and rank, and the NCCL handle (not available yet)."""

from __future__ import annotations

from typing import Any

from caffe_core.errors import CaffeError

_NOT_AVAILABLE = "multi-process/NCCL training is not available yet; train with one process (solver_count 1)"

_solver_count = 1
_solver_rank = 0
_multiprocess = False


def solver_count() -> int:
    """How many solvers train together (1 unless set)."""
    return _solver_count


def set_solver_count(count: int) -> None:
    """Sets how many solvers train together."""
    global _solver_count
    if count < 1:
        raise ValueError(f"solver count must be >= 1, got {count}")
    _solver_count = int(count)


def solver_rank() -> int:
    """This process's solver rank (0 is the root solver)."""
    return _solver_rank


def set_solver_rank(rank: int) -> None:
    """Sets this process's solver rank."""
    global _solver_rank
    if rank < 0:
        raise ValueError(f"solver rank must be >= 0, got {rank}")
    _solver_rank = int(rank)


def multiprocess() -> bool:
    """Whether set_multiprocess(True) was called."""
    return _multiprocess


def set_multiprocess(value: bool) -> None:
    """Marks this process as one of several training together."""
    global _multiprocess
    _multiprocess = bool(value)


def has_nccl() -> bool:
    """Whether NCCL multi-GPU training is built in: it is not."""
    return False


class NCCL:
    """Caffe's NCCL gradient all-reduce handle; constructing one fails until multi-process training lands."""

    def __init__(self, solver: Any, uid: Any) -> None:
        raise CaffeError(_NOT_AVAILABLE)

    @staticmethod
    def new_uid() -> bytes:
        """A fresh NCCL unique id; fails until multi-process training lands."""
        raise CaffeError(_NOT_AVAILABLE)
