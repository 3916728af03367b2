"""AdaDelta (Caffe's AdaDeltaSolver): history holds every h (mean g²) and then every h2 (mean update²)."""

from __future__ import annotations

from caffe_core.device import Side
from caffe_core.solvers.sgd import SGDSolver, f32


class AdaDeltaSolver(SGDSolver):
    """h = m·h + (1−m)·g²; u = g·√((h2+δ)/(h+δ)); h2 = m·h2 + (1−m)·u²; diff = lr·u."""

    type = "AdaDelta"
    history_sets = 2

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """AdaDelta's step from the two running means."""
        xp = side.xp
        momentum = f32(self.param.momentum)
        delta = f32(self.param.delta)
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        grads = self.history_data(side, param_id)
        updates = self.history_data(side, param_id, history_set=1)
        grads[...] = (f32(1) - momentum) * (diff * diff) + momentum * grads
        step = diff * xp.sqrt((delta + updates) / (delta + grads))
        updates[...] = (f32(1) - momentum) * (step * step) + momentum * updates
        diff[...] = self.local_rate(rate, param_id) * step
