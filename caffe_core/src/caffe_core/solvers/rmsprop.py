"""RMSProp (Caffe's RMSPropSolver)."""

from __future__ import annotations

from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverError
from caffe_core.solvers.sgd import SGDSolver, f32


class RMSPropSolver(SGDSolver):
    """h = d·h + (1−d)·g²; diff = lr · g / (√h + delta), with d = rms_decay."""

    type = "RMSProp"
    uses_momentum = False

    @classmethod
    def check_param(cls, param: caffe_pb2.SolverParameter) -> None:
        """Momentum must be 0 and rms_decay in [0, 1)."""
        super().check_param(param)
        if not 0 <= param.rms_decay < 1:
            raise SolverError(f"rms_decay should lie between 0 and 1 (got {param.rms_decay:g})")

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """Keeps a running mean of squared gradients and scales the step by its root."""
        xp = side.xp
        decay = f32(self.param.rms_decay)
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        history = self.history_data(side, param_id)
        history[...] = (f32(1) - decay) * (diff * diff) + decay * history
        diff[...] = self.local_rate(rate, param_id) * (diff / (xp.sqrt(history) + f32(self.param.delta)))
