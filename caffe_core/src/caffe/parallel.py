"""pycaffe's multi-process API: solver count and rank, and the NCCL gradient all-reduce handle."""

from __future__ import annotations

from caffe_core.parallel.nccl_handle import NCCL, has_nccl
from caffe_core.runtime import (
    multiprocess,
    set_multiprocess,
    set_solver_count,
    set_solver_rank,
    solver_count,
    solver_rank,
)

__all__ = ["NCCL", "has_nccl", "multiprocess", "set_multiprocess", "set_solver_count", "set_solver_rank",
           "solver_count", "solver_rank"]
