"""Flatten: merges the axes [axis, end_axis] into one, sharing the bottom's memory."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.axes import canonical_axis


class FlattenLayer(Layer):
    """A reshape that collapses axes flatten_param.axis through end_axis; no copy is made."""

    type = "Flatten"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Refuses in-place use."""
        if top[0] is bottom[0]:
            raise self.error("does not allow in-place computation (give the top a different name "
                             "from the bottom)")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's with the flattened axes merged."""
        param = self.layer_param.flatten_param
        shape = bottom[0].shape
        start = canonical_axis(self, bottom[0], param.axis, "flatten_param.axis")
        end = canonical_axis(self, bottom[0], param.end_axis, "flatten_param.end_axis")
        if end < start:
            raise self.error(f"flatten_param.end_axis ({end}) comes before axis ({start})")
        top[0].reshape(shape[:start] + (bottom[0].count_between(start, end + 1),) + shape[end + 1:])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top shares the bottom's data."""
        top[0].share_data(bottom[0])

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The bottom shares the top's diff."""
        bottom[0].share_diff(top[0])
