"""Adam (Caffe's AdamSolver): history holds every first moment m and then every second moment v."""

from __future__ import annotations

import math

from caffe_core.device import Side
from caffe_core.solvers.sgd import SGDSolver, f32


class AdamSolver(SGDSolver):
    """m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²; diff = lr·√(1−β2^t)/(1−β1^t) · m/(√v + δ), t = iter+1."""

    type = "Adam"
    history_sets = 2

    def compute_update_value(self, side: Side, param_id: int, rate: float) -> None:
        """Adam's bias-corrected step."""
        xp = side.xp
        beta1 = f32(self.param.momentum)
        beta2 = f32(self.param.momentum2)
        t = self.iter + 1
        correction = f32(math.sqrt(1.0 - math.pow(beta2, t)) / (1.0 - math.pow(beta1, t)))
        diff = self.net.learnable_params[param_id].mutable_diff_on(side)
        first = self.history_data(side, param_id)
        second = self.history_data(side, param_id, history_set=1)
        first[...] = (f32(1) - beta1) * diff + beta1 * first
        second[...] = (f32(1) - beta2) * (diff * diff) + beta2 * second
        step = first / (xp.sqrt(second) + f32(self.param.delta))
        diff[...] = (self.local_rate(rate, param_id) * correction) * step
