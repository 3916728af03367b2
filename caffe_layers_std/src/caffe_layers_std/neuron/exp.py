"""Exp: y = base ^ (shift + scale x), with base e by default."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.neuron.exp_log_power import log_of_base
from caffe_layers_std.rounding import expf


class ExpLayer(NeuronLayer):
    """y = exp(inner_scale x) * outer_scale, with Caffe's folding of base, scale and shift."""

    type = "Exp"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Folds base, scale and shift into an inner and an outer scale (float32, as Caffe's)."""
        param = self.layer_param.exp_param
        base = param.base
        self.inner_scale = np.float32(log_of_base(self, base, "exp_param.base")) * np.float32(param.scale)
        self.outer_scale = np.float32(1.0 if param.shift == 0 else (
            math.exp(param.shift) if base == -1 else math.pow(base, param.shift)))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = exp(inner_scale x) * outer_scale."""
        y = expf(side.xp, self.inner_scale * bottom[0].data_on(side))
        top[0].mutable_data_on(side)[...] = y * self.outer_scale if self.outer_scale != 1 else y

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy y inner_scale."""
        if not propagate_down[0]:
            return
        dx = top[0].diff_on(side) * top[0].data_on(side)
        bottom[0].mutable_diff_on(side)[...] = dx * self.inner_scale if self.inner_scale != 1 else dx
