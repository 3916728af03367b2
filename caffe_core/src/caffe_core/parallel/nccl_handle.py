"""pycaffe's `caffe.NCCL`: the all-reduce handle of BVLC's python/train.py, over MPI ranks or NCCL."""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType
from typing import Protocol

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.parallel.communicators import (
    Communicator,
    MpiCommunicator,
    NcclCommunicator,
    StagedCommunicator,
)
from caffe_core.parallel.data_parallel import DataParallel
from caffe_core.parallel.mpi_world import launched_size, world
from caffe_core.solvers.base import Solver, SolverAction


class WrapsSolver(Protocol):
    """A solver view over a core solver, as pycaffe's solvers are."""

    @property
    def core(self) -> Solver:
        """The core solver behind the view."""


def has_nccl() -> bool:
    """Whether several solvers can train together here: mpi4py is installed, or cupy has NCCL."""
    return importlib.util.find_spec("mpi4py") is not None or _cupy_nccl() is not None


def _cupy_nccl() -> ModuleType | None:
    try:
        from cupy.cuda import nccl
    except ImportError:
        return None
    return nccl if nccl.available else None


def rank_communicator() -> Communicator:
    """The communicator of this job's ranks for the current mode (MPI on the host, NCCL or staged on GPU)."""
    host = MpiCommunicator(world())
    if runtime.mode() != runtime.GPU_MODE:
        return host
    from caffe_core.device import GPU, standin_enabled

    if _cupy_nccl() is not None and not standin_enabled():
        return NcclCommunicator(GPU.xp, host)
    return StagedCommunicator(host)


class NCCL:
    """`caffe.NCCL(solver, uid)`: add it as a solver callback (and to `net.after_backward` for layer-wise
    reduce); `bcast()` hands every rank the root's weights."""

    def __init__(self, solver: Solver | WrapsSolver, uid: object) -> None:
        if launched_size() > 1:
            comm = rank_communicator()
        elif _cupy_nccl() is not None and runtime.mode() == runtime.GPU_MODE:
            from caffe_core.device import GPU

            comm = NcclCommunicator(GPU.xp, None, uid, runtime.solver_count(), runtime.solver_rank())
        else:
            raise CaffeError("caffe.NCCL needs the ranks started by mpiexec (pip install 'caffe-core[mpi]'), "
                             "or GPU mode with cupy's NCCL for processes started another way")
        if comm.size != runtime.solver_count() or comm.rank != runtime.solver_rank():
            raise CaffeError(f"caffe.NCCL: this process is rank {comm.rank} of {comm.size}, but "
                             f"set_solver_rank/set_solver_count say {runtime.solver_rank()} of "
                             f"{runtime.solver_count()}")
        self.parallel = DataParallel(solver if isinstance(solver, Solver) else solver.core, comm)

    @staticmethod
    def new_uid() -> object:
        """A fresh NCCL unique id (under MPI the id is carried by MPI, so any value will do)."""
        nccl = _cupy_nccl()
        return nccl.get_unique_id() if nccl is not None else os.urandom(128)

    def bcast(self) -> None:
        """Every rank takes the root's weights."""
        self.parallel.broadcast()

    def on_start(self) -> None:
        """Solver callback: an iteration starts."""
        self.parallel.on_start()

    def on_gradients_ready(self) -> None:
        """Solver callback: the gradients are averaged over the ranks."""
        self.parallel.on_gradients_ready()

    def agree_on_action(self, action: SolverAction) -> SolverAction:
        """Solver hook: the root's action for every rank."""
        return self.parallel.agree_on_action(action)

    def __call__(self, layer_id: int) -> None:
        """Net after-backward callback: layer-wise reduce."""
        self.parallel(layer_id)
