"""ELU: y = x for x > 0, alpha (exp(x) - 1) otherwise."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.rounding import expf


class ELULayer(NeuronLayer):
    """Exponential linear unit with elu_param.alpha."""

    type = "ELU"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads alpha."""
        self.alpha = self.layer_param.elu_param.alpha

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = max(x, 0) + alpha (exp(min(x, 0)) - 1)."""
        xp = side.xp
        x = bottom[0].data_on(side)
        top[0].mutable_data_on(side)[...] = xp.maximum(x, 0) + self.alpha * (expf(xp, xp.minimum(x, 0)) - 1)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy for x > 0, dy (y + alpha) otherwise."""
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side)
        slope = xp.where(x > 0, 1, top[0].data_on(side) + self.alpha)
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * slope
