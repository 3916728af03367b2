"""Log: y = log_base(shift + scale x), with base e by default."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.neuron.exp_log_power import log_of_base, scale_and_shift
from caffe_layers_std.rounding import logf


class LogLayer(NeuronLayer):
    """y = ln(shift + scale x) / ln(base)."""

    type = "Log"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads base, scale and shift (float32 scale factors, as Caffe's)."""
        param = self.layer_param.log_param
        log_base = np.float32(log_of_base(self, param.base, "log_param.base"))
        if log_base == 0:
            raise self.error("log_param.base must not be 1: the layer divides by log(base), which is 0")
        self.base_scale = np.float32(1) / log_base
        self.input_scale = np.float32(param.scale)
        self.input_shift = np.float32(param.shift)
        self.backward_scale = self.input_scale * self.base_scale

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = ln(shift + scale x) * base_scale."""
        y = logf(side.xp, scale_and_shift(bottom[0].data_on(side), self.input_scale, self.input_shift))
        top[0].mutable_data_on(side)[...] = y * self.base_scale if self.base_scale != 1 else y

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy scale base_scale / (shift + scale x)."""
        if not propagate_down[0]:
            return
        inverse = 1 / scale_and_shift(bottom[0].data_on(side), self.input_scale, self.input_shift)
        if self.backward_scale != 1:
            inverse = inverse * self.backward_scale
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * inverse
