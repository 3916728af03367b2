"""Clip: y = max(min, min(max, x))."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class ClipLayer(NeuronLayer):
    """Clamps to [clip_param.min, clip_param.max]; both bounds are required."""

    type = "Clip"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads and checks the bounds."""
        param = self.layer_param.clip_param
        missing = [name for name in ("min", "max") if not param.HasField(name)]
        if missing:
            raise self.error(f"clip_param needs both min and max; missing {' and '.join(missing)}")
        self.min, self.max = param.min, param.max

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = max(min, min(max, x))."""
        xp = side.xp
        clipped = xp.maximum(self.min, xp.minimum(bottom[0].data_on(side), self.max))
        top[0].mutable_data_on(side)[...] = clipped

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy where min <= x <= max, else 0."""
        if propagate_down[0]:
            x = bottom[0].data_on(side)
            bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * ((x >= self.min) & (x <= self.max))
