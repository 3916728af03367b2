"""Nesterov's accelerated gradient (Caffe's NesterovSolver)."""

from __future__ import annotations

from caffe_core.device import Side
from caffe_core.solvers.sgd import SGDSolver, f32


class NesterovSolver(SGDSolver):
    """h_old = h; h = lr·g + m·h; diff = (1+m)·h − m·h_old."""

    type = "Nesterov"

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """Nesterov's look-ahead momentum update."""
        momentum = f32(self.param.momentum)
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        history = self.history_data(side, param_id)
        previous = history.copy()
        history[...] = self.local_rate(rate, param_id) * diff + momentum * history
        diff[...] = (f32(1) + momentum) * history - momentum * previous
