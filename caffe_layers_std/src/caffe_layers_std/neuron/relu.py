"""ReLU: y = max(x, 0) + negative_slope min(x, 0)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class ReLULayer(NeuronLayer):
    """Rectified linear unit, leaky with relu_param.negative_slope."""

    type = "ReLU"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads negative_slope."""
        self.negative_slope = self.layer_param.relu_param.negative_slope

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = max(x, 0) + negative_slope min(x, 0)."""
        xp = side.xp
        x = bottom[0].data_on(side)
        y = top[0].mutable_data_on(side)
        if self.negative_slope == 0:
            xp.maximum(x, 0, out=y)
        else:
            y[...] = xp.maximum(x, 0) + self.negative_slope * xp.minimum(x, 0)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy ([x > 0] + negative_slope [x <= 0])."""
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side)
        dy = top[0].diff_on(side)
        dx = bottom[0].mutable_diff_on(side)
        if self.negative_slope == 0:
            xp.multiply(dy, x > 0, out=dx)
        else:
            dx[...] = dy * xp.where(x > 0, 1, self.negative_slope).astype(x.dtype)
