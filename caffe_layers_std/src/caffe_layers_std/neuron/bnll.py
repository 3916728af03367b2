"""BNLL: the binomial normal log likelihood, y = log(1 + exp(x))."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.rounding import expf

# Caffe clamps the exponent in the backward pass to avoid overflow.
BNLL_THRESHOLD = 50.0


class BNLLLayer(NeuronLayer):
    """y = log(1 + exp(x)), computed stably as Caffe does."""

    type = "BNLL"

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x + log(1 + exp(-x)) for x > 0, else log(1 + exp(x))."""
        xp = side.xp
        x = bottom[0].data_on(side)
        # As in Caffe, the float exp is added to a double 1 and the log and the sum are taken in double.
        softplus = xp.log(1.0 + expf(xp, -xp.abs(x)).astype(xp.float64))
        top[0].mutable_data_on(side)[...] = xp.maximum(x, 0).astype(xp.float64) + softplus

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy e / (e + 1), e = exp(min(x, 50))."""
        if not propagate_down[0]:
            return
        xp = side.xp
        e = expf(xp, xp.minimum(bottom[0].data_on(side), xp.float32(BNLL_THRESHOLD)))
        # Caffe divides the float product dy e by the double e + 1.
        dx = (top[0].diff_on(side) * e).astype(xp.float64) / (e.astype(xp.float64) + 1)
        bottom[0].mutable_diff_on(side)[...] = dx
