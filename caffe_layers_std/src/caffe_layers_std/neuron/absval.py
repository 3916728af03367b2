"""AbsVal: y = |x|."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class AbsValLayer(NeuronLayer):
    """Absolute value; its backward needs the input, so in-place use is refused."""

    type = "AbsVal"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Refuses in-place computation, as Caffe does."""
        if top[0] is bottom[0]:
            raise self.error("does not allow in-place computation (give the top a different name "
                             "from the bottom)")

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = |x|."""
        top[0].mutable_data_on(side)[...] = side.xp.abs(bottom[0].data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = sign(x) dy, with sign(0) = 0."""
        if propagate_down[0]:
            sign = side.xp.sign(bottom[0].data_on(side))
            bottom[0].mutable_diff_on(side)[...] = sign * top[0].diff_on(side)
