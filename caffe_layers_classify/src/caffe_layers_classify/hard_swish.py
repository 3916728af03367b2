"""HardSwish (inisis/caffe, MobileNet v3): y = x clip(x / 6 + 1/2, 0, 1)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class HardSwishLayer(NeuronLayer):
    """x times a hard sigmoid of x; backward is the true gradient (the fork's Backward_cpu is empty)."""

    type = "HardSwish"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """No parameters; prepares the in-place input copy."""
        self.saved_input: Array | None = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x max(0, min(1, x / 6 + 0.5)), in float32 as the fork computes it."""
        xp = side.xp
        x = bottom[0].data_on(side)
        # In place, x is overwritten and cannot be recovered from y (not monotonic below 0): keep a copy.
        self.saved_input = x.copy() if top[0] is bottom[0] else None
        gate = xp.clip(x / np.float32(6) + np.float32(0.5), 0, 1)
        xp.multiply(x, gate, out=top[0].mutable_data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy (0 for x < -3, x / 3 + 1/2 for -3 <= x <= 3, 1 above)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side) if self.saved_input is None else self.saved_input
        slope = xp.where(x < -3, np.float32(0), xp.where(x <= 3, x / np.float32(3) + np.float32(0.5),
                                                         np.float32(1)))
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side) * slope
