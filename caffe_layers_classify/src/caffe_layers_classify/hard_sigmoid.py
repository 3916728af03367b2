"""HardSigmoid (inisis/caffe, ONNX style): y = max(0, min(1, alpha x + beta))."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.schema_extensions import get_param_block


class HardSigmoidLayer(NeuronLayer):
    """A clipped line; backward is the true gradient (the fork's Backward_cpu is empty)."""

    type = "HardSigmoid"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads alpha and beta."""
        param = get_param_block(self.layer_param, "hardsigmoid_param")
        self.alpha = np.float32(param.alpha)
        self.beta = np.float32(param.beta)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = max(0, min(1, alpha x + beta))."""
        xp = side.xp
        x = bottom[0].data_on(side)
        xp.clip(x * self.alpha + self.beta, 0, 1, out=top[0].mutable_data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = alpha dy where 0 < y < 1 (the linear part), else 0; read from y, so in place works."""
        if not propagate_down[0]:
            return
        y = top[0].data_on(side)
        inside = (y > 0) & (y < 1)
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * self.alpha * inside
