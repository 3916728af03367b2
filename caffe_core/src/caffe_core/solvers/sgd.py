"""SGD with momentum, and the machinery every gradient-based solver shares (Caffe's SGDSolver).

ApplyUpdate: rate of this iteration, lr log line, gradient clipping, then per learnable param
Normalize (÷ iter_size), Regularize (L2/L1 weight decay) and the type's ComputeUpdateValue, then
net.Update (data -= diff). The history holds `history_sets` blobs per learnable param, set after set.
"""

from __future__ import annotations

import logging
import math
import os

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_core.runtime import current_side
from caffe_core.solvers.base import Solver
from caffe_core.solvers.errors import SolverError, SolverStateError
from caffe_core.solvers.lr_policy import learning_rate
from caffe_core.solvers.state_io import SolverStateData

log = logging.getLogger("caffe.solver")

f32 = np.float32


class SGDSolver(Solver):
    """Stochastic gradient descent with momentum: h = lr·g + m·h; diff = h."""

    type = "SGD"
    history_sets = 1
    uses_momentum = True

    def __init__(self, param: caffe_pb2.SolverParameter | str | os.PathLike) -> None:
        super().__init__(param)
        self.history = [Blob(p.shape) for _ in range(self.history_sets) for p in self.net.learnable_params]

    @classmethod
    def check_param(cls, param: caffe_pb2.SolverParameter) -> None:
        """A rule without momentum rejects a non-zero momentum, as Caffe's constructors CHECK."""
        if not cls.uses_momentum and param.momentum != 0:
            raise SolverError(f"Momentum cannot be used with {cls.type} (momentum is {param.momentum:g}; "
                              f"set it to 0)")

    # ----- learning rate -----
    def get_learning_rate(self) -> float:
        """The rate of the current iteration (advances the multistep state, as Caffe's)."""
        rate, self.current_step = learning_rate(self.param, self.iter, self.current_step)
        return rate

    # ----- update -----
    def apply_update(self) -> None:
        """Caffe's SGDSolver::ApplyUpdate."""
        rate = self.get_learning_rate()
        if self.param.display and self.iter % self.param.display == 0:
            log.info("Iteration %d, lr = %g", self.iter, rate)
        self.clip_gradients()
        side = current_side()
        for param_id in range(len(self.net.learnable_params)):
            self.normalize(side, param_id)
            self.regularize(side, param_id)
            self.compute_update_value(side, param_id, rate)
        self.net.update()

    def clip_gradients(self) -> None:
        """Scales every diff by clip/‖g‖ when the global L2 norm of all diffs exceeds clip_gradients."""
        clip = self.param.clip_gradients
        if clip < 0:
            return
        side = current_side()
        # One device-to-host copy for the norm, not one per param.
        norm = math.sqrt(float(sum(p.sumsq_diff_on(side) for p in self.net.learnable_params)))
        if norm > clip:
            scale = clip / norm
            log.info("Gradient clipping: scaling down gradients (L2 norm %g > %g) by scale factor %g",
                     norm, clip, scale)
            for p in self.net.learnable_params:
                p.scale_diff(scale)

    def normalize(self, side: Side, param_id: int) -> None:
        """Divides the accumulated gradient by iter_size."""
        if self.param.iter_size == 1:
            return
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        diff *= f32(1.0) / f32(self.param.iter_size)

    def regularize(self, side: Side, param_id: int) -> None:
        """Adds weight_decay·decay_mult·w (L2) or ·sign(w) (L1) to the gradient."""
        local_decay = f32(self.param.weight_decay) * f32(self.net.graph.learnables[param_id].decay_mult)
        if not local_decay:
            return
        blob = self.net.learnable_params[param_id]
        data = blob.data_on(side)
        diff = blob.mutable_diff_on(side)
        if self.param.regularization_type == "L2":
            diff += local_decay * data
        else:
            diff += local_decay * side.xp.sign(data)

    def local_rate(self, rate: float, param_id: int) -> np.float32:
        """rate × lr_mult, in float32."""
        return f32(rate) * f32(self.net.graph.learnables[param_id].lr_mult)

    def history_data(self, side: Side, param_id: int, history_set: int = 0) -> Array:
        """The writable history array of a learnable param in one of the type's history sets."""
        return self.history[history_set * len(self.net.learnable_params) + param_id].mutable_data_on(side)

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """h = local_rate·g + momentum·h; diff = h."""
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        history = self.history_data(side, param_id)
        history[...] = self.local_rate(rate, param_id) * diff + f32(self.param.momentum) * history
        diff[...] = history

    # ----- state -----
    def solver_state(self, model_filename: str) -> SolverStateData:
        """iter, current_step, the weights file name and every history blob."""
        return SolverStateData(self.iter, self.current_step, model_filename,
                               [h.cpu_data().copy() for h in self.history])

    def check_solver_state(self, state: SolverStateData, source: str) -> None:
        """The history must have this solver's blob count and each learnable param's shape."""
        if len(state.history) != len(self.history):
            raise SolverStateError(
                f"{source}: Incorrect length of history blobs: the state holds {len(state.history)}, a "
                f"{self.type} solver on net '{self.net.name}' needs {len(self.history)} "
                f"({self.history_sets} per learnable param); was it saved from a different net or "
                f"solver type?")
        for i, (stored, blob) in enumerate(zip(state.history, self.history, strict=True)):
            if tuple(stored.shape) != blob.shape and stored.size != blob.count:
                raise SolverStateError(f"{source}: history blob {i} has shape {tuple(stored.shape)}, net "
                                       f"'{self.net.name}' needs {blob.shape}; was it saved from a "
                                       f"different net?")

    def restore_solver_state(self, state: SolverStateData, source: str) -> None:
        """Copies the saved history into the solver's history blobs."""
        log.info("SGDSolver: restoring history")
        for stored, blob in zip(state.history, self.history, strict=True):
            blob.mutable_cpu_data()[...] = np.asarray(stored, dtype=np.float32).reshape(blob.shape)
