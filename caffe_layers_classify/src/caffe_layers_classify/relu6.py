"""ReLU6 (inisis/caffe): y = min(max(x, 0) + negative_slope min(x, 0), threshold)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.schema_extensions import get_param_block


class ReLU6Layer(NeuronLayer):
    """A (leaky) ReLU clipped from above at relu6_param.threshold."""

    type = "ReLU6"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads negative_slope and threshold."""
        param = get_param_block(self.layer_param, "relu6_param")
        self.negative_slope = np.float32(param.negative_slope)
        self.threshold = np.float32(param.threshold)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = min(max(x, 0) + negative_slope min(x, 0), threshold)."""
        xp = side.xp
        x = bottom[0].data_on(side)
        leaky = xp.maximum(x, 0) + self.negative_slope * xp.minimum(x, 0)
        xp.minimum(leaky, self.threshold, out=top[0].mutable_data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy ([x > 0] + negative_slope [x <= 0]) [x < threshold], as the fork (0 at both kinks)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side)
        slope = xp.where(x > 0, np.float32(1), self.negative_slope)
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * slope * (x < self.threshold)
