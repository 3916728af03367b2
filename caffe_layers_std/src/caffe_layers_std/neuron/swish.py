"""Swish: y = x sigmoid(beta x)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_layers_std.neuron.sigmoid import sigmoid


class SwishLayer(NeuronLayer):
    """x sigmoid(beta x), with swish_param.beta."""

    type = "Swish"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads beta."""
        self.beta = self.layer_param.swish_param.beta
        self.sigmoid_output: Array | None = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x sigmoid(beta x); the sigmoid is kept for backward."""
        x = bottom[0].data_on(side)
        self.sigmoid_output = sigmoid(side.xp, x * self.beta)
        top[0].mutable_data_on(side)[...] = x * self.sigmoid_output

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy (beta y + s (1 - beta y)), s the forward's sigmoid."""
        if propagate_down[0]:
            xp = side.xp
            beta_y = (xp.float32(self.beta) * top[0].data_on(side)).astype(xp.float64)
            assert self.sigmoid_output is not None  # kept by the forward, which runs before backward
            s = self.sigmoid_output.astype(xp.float64)
            # Caffe's `1. - beta y` is double, so the whole expression is evaluated in double.
            dx = top[0].diff_on(side).astype(xp.float64) * (beta_y + s * (1.0 - beta_y))
            bottom[0].mutable_diff_on(side)[...] = dx
