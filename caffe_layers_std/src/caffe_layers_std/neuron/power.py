"""Power: y = (shift + scale x) ^ power."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.neuron.exp_log_power import scale_and_shift


class PowerLayer(NeuronLayer):
    """y = (shift + scale x) ^ power, with Caffe's special cases for constant, linear and square maps."""

    type = "Power"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads power, scale and shift as float32 (Caffe multiplies them in float)."""
        param = self.layer_param.power_param
        self.power, self.scale, self.shift = (np.float32(v) for v in (param.power, param.scale, param.shift))
        self.diff_scale = self.power * self.scale

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = (shift + scale x) ^ power; a constant when power or scale is 0."""
        out = top[0].mutable_data_on(side)
        if self.diff_scale == 0:
            out[...] = 1.0 if self.power == 0 else float(self.shift) ** float(self.power)
            return
        y = scale_and_shift(bottom[0].data_on(side), self.scale, self.shift)
        out[...] = side.xp.power(y, self.power) if self.power != 1 else y

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy power scale (shift + scale x) ^ (power - 1), in Caffe's cases."""
        if not propagate_down[0]:
            return
        dx = bottom[0].mutable_diff_on(side)
        dy = top[0].diff_on(side)
        if self.diff_scale == 0:
            dx[...] = 0
            return
        x = bottom[0].data_on(side)
        if self.power == 1:
            dx[...] = dy * self.diff_scale
        elif self.power == 2:
            # d/dx (shift + scale x)^2 = diff_scale * scale * x + diff_scale * shift
            grad: Array = x * (self.diff_scale * self.scale)
            if self.shift != 0:
                grad = grad + self.diff_scale * self.shift
            dx[...] = dy * grad
        elif self.shift == 0:
            dx[...] = dy * (top[0].data_on(side) / x * self.power)
        else:
            grad = top[0].data_on(side) / scale_and_shift(x, self.scale, self.shift)
            if self.diff_scale != 1:
                grad = grad * self.diff_scale
            dx[...] = dy * grad
