"""AdaGrad (Caffe's AdaGradSolver)."""

from __future__ import annotations

from caffe_core.device import Side
from caffe_core.solvers.sgd import SGDSolver, f32


class AdaGradSolver(SGDSolver):
    """h += g²; diff = lr · g / (√h + delta)."""

    type = "AdaGrad"
    uses_momentum = False

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """Accumulates squared gradients and scales the step by their root."""
        xp = side.xp
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        history = self.history_data(side, param_id)
        history += diff * diff
        diff[...] = self.local_rate(rate, param_id) * (diff / (xp.sqrt(history) + f32(self.param.delta)))
