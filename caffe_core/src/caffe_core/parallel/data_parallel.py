"""The data-parallel solver callback: Caffe's NCCL class (broadcast, layer-wise reduce, average) on any
communicator."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from caffe_core.parallel.communicators import Communicator
from caffe_core.parallel.flat_gradients import FlatGradients
from caffe_core.runtime import current_side
from caffe_core.solvers.base import Solver, SolverAction

if TYPE_CHECKING:
    from mpi4py import MPI


class DataParallel:
    """Keeps a solver in step with the other ranks: the root's weights and state at the start, the mean
    gradient before every update (buckets start summing as backward completes them), the root's action."""

    def __init__(self, solver: Solver, comm: Communicator) -> None:
        self.solver, self.comm = solver, comm
        self.side = current_side()
        self.flat = FlatGradients(solver.net, self.side)
        self.scale = np.float32(1) / np.float32(comm.size)
        self.last_pass = solver.param.iter_size - 1
        self.pass_index = 0
        self.pending: list[MPI.Request | None] = []

    # ----- start -----
    def broadcast(self) -> None:
        """Every rank takes the root's weights (Caffe's NCCL::Broadcast)."""
        for blob in self.solver.net.learnable_params:
            self.comm.broadcast(blob.mutable_data_on(self.side).reshape(-1))

    def broadcast_state(self) -> None:
        """Every rank takes the root's iteration, learning-rate step and update history (after a restore)."""
        solver = self.solver
        solver.iter, solver.current_step = self.comm.broadcast_object((solver.iter, solver.current_step))
        for blob in getattr(solver, "history", ()):
            self.comm.broadcast(blob.mutable_data_on(self.side).reshape(-1))

    # ----- every iteration -----
    def on_start(self) -> None:
        """A new iteration: its last forward/backward pass sends the buckets."""
        self.pass_index = 0

    def __call__(self, layer_id: int) -> None:
        """After a layer's backward: start summing the buckets it completed (Caffe's layer_wise_reduce)."""
        if self.pass_index == self.last_pass:
            for bucket in self.flat.launch_at.get(layer_id, ()):
                self.pending.append(self.comm.start_sum(self.flat.view(bucket)))
        if layer_id == 0:
            self.pass_index += 1

    def on_gradients_ready(self) -> None:
        """Completes the sums (or makes one, when backward sent none) and divides by the rank count."""
        if not self.pending:  # backward sent no bucket (layer_wise_reduce off)
            self.pending.append(self.comm.start_sum(self.flat.buffer))
        self.comm.finish([p for p in self.pending if p is not None])
        self.pending = []
        self.flat.buffer *= self.scale

    def agree_on_action(self, action: SolverAction) -> SolverAction:
        """The root's stop or snapshot request, for every rank."""
        return SolverAction(self.comm.broadcast_object(action.value))
