"""Reverse (senlinuc/caffe_ocr, jolibrain/caffe): reverses a blob along one axis (by default the
time axis)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.schema_extensions import get_param_block


class ReverseLayer(NeuronLayer):
    """top[..., i, ...] = bottom[..., n - 1 - i, ...] along reverse_param.axis; backward reverses the diff."""

    type = "Reverse"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads axis (0 or more); refuses in-place use, as the fork does."""
        self.axis = int(get_param_block(self.layer_param, "reverse_param").axis)
        if self.axis < 0:
            raise self.error(f"reverse_param.axis must be 0 or more (the fork counts axes from the front "
                             f"only), got {self.axis}")
        if top[0] is bottom[0]:
            raise self.error("does not allow in-place computation (give the top a different name from the "
                             "bottom)")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's; the axis must exist."""
        if self.axis >= bottom[0].num_axes:
            raise self.error(f"reverse_param.axis {self.axis} must be less than the number of axes of bottom "
                             f"'{self.layer_param.bottom[0]}' (shape {bottom[0].shape})")
        super().reshape(bottom, top)

    def _index(self, num_axes: int) -> tuple[slice, ...]:
        after = num_axes - self.axis - 1
        return (slice(None),) * self.axis + (slice(None, None, -1),) + (slice(None),) * after

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = bottom reversed along axis."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)[self._index(bottom[0].num_axes)]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = top.diff reversed along axis."""
        if not propagate_down[0]:
            return
        bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side)[self._index(top[0].num_axes)]
