"""Sigmoid: y = 1 / (1 + exp(-x))."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


def sigmoid(xp: ArrayModule, x: Array) -> Array:
    """Caffe's sigmoid 0.5 tanh(0.5 x) + 0.5, in double then rounded to x's precision, as Caffe does."""
    return (0.5 * xp.tanh(0.5 * x.astype(xp.float64)) + 0.5).astype(x.dtype)


class SigmoidLayer(NeuronLayer):
    """The logistic function."""

    type = "Sigmoid"

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = sigmoid(x)."""
        top[0].mutable_data_on(side)[...] = sigmoid(side.xp, bottom[0].data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy y (1 - y)."""
        if propagate_down[0]:
            xp = side.xp
            y = top[0].data_on(side)
            # Caffe's `1. - y` is double, so the last product and the rounding happen in double.
            dx = (top[0].diff_on(side) * y).astype(xp.float64) * (1.0 - y.astype(xp.float64))
            bottom[0].mutable_diff_on(side)[...] = dx
