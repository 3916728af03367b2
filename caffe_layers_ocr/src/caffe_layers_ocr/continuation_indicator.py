"""ContinuationIndicator (jolibrain/caffe): the sequence-continuation markers BVLC's recurrent layers read."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class ContinuationIndicatorLayer(Layer):
    """A (time_step, N) top, 0 at the first step and 1 after; N is the bottom's dimension along `axis`."""

    type = "ContinuationIndicator"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads time_step (more than 0, as the fork CHECKs) and axis."""
        param = get_param_block(self.layer_param, "continuation_indicator_param")
        self.time_step = int(param.time_step)
        self.axis_param = int(param.axis)
        if self.time_step <= 0:
            raise self.error("continuation_indicator_param.time_step (the number of time steps) should be "
                             f"greater than 0, got {self.time_step}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (time_step, batch), the batch read from the bottom's `axis` dimension."""
        num_axes = bottom[0].num_axes
        if not -num_axes <= self.axis_param < num_axes:
            raise self.error(f"continuation_indicator_param.axis {self.axis_param} is out of range "
                             f"for bottom '{self.layer_param.bottom[0]}' of shape {bottom[0].shape}")
        batch = bottom[0].shape[self.axis_param]
        if batch <= 0:
            raise self.error(f"the batch size (bottom dimension {self.axis_param}) should be greater than 0")
        top[0].reshape((self.time_step, batch))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Row 0 is 0, the other rows 1."""
        out = top[0].mutable_data_on(side)
        out[...] = 1
        out[0] = 0
