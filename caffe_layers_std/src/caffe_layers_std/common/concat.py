"""Concat: joins bottoms along one axis."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.axes import axis_or_legacy_dim


class ConcatLayer(Layer):
    """Concatenates along concat_param.axis (or the deprecated concat_dim); all other axes must agree."""

    type = "Concat"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottoms' shape with the concat axis summed."""
        axis = self.axis = axis_or_legacy_dim(self, bottom[0], "concat_param", "concat_dim")
        first = bottom[0].shape
        total = 0
        for i, blob in enumerate(bottom):
            if blob.num_axes != len(first):
                raise self.error(f"all bottoms must have the same number of axes: bottom {i} has shape "
                                 f"{blob.shape}, bottom 0 has {first}")
            if blob.shape[:axis] != first[:axis] or blob.shape[axis + 1:] != first[axis + 1:]:
                raise self.error(f"all bottoms must have the same shape except along axis {axis}: bottom {i} "
                                 f"has shape {blob.shape}, bottom 0 has {first}")
            total += blob.shape[axis]
        top[0].reshape(first[:axis] + (total,) + first[axis + 1:])
        if len(bottom) == 1:
            top[0].share_data(bottom[0])
            top[0].share_diff(bottom[0])

    def _sections(self, blobs: Sequence[Blob]) -> list[int]:
        """Where each bottom starts and ends along the axis."""
        bounds = [0]
        for blob in blobs:
            bounds.append(bounds[-1] + blob.shape[self.axis])
        return bounds

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies each bottom into its section of the top."""
        if len(bottom) == 1:
            return
        out = top[0].mutable_data_on(side)
        bounds = self._sections(bottom)
        for i, blob in enumerate(bottom):
            out[(slice(None),) * self.axis + (slice(bounds[i], bounds[i + 1]),)] = blob.data_on(side)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Copies each section of the top diff back to its bottom."""
        if len(bottom) == 1:
            return
        dy = top[0].diff_on(side)
        bounds = self._sections(bottom)
        for i, blob in enumerate(bottom):
            if propagate_down[i]:
                section = (slice(None),) * self.axis + (slice(bounds[i], bounds[i + 1]),)
                blob.mutable_diff_on(side)[...] = dy[section]
