"""TanH: y = tanh(x)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class TanHLayer(NeuronLayer):
    """The hyperbolic tangent."""

    type = "TanH"

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = tanh(x)."""
        top[0].mutable_data_on(side)[...] = side.xp.tanh(bottom[0].data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy (1 - y^2)."""
        if propagate_down[0]:
            y = top[0].data_on(side)
            bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * (1 - y * y)
