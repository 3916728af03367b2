"""Slice: splits a bottom along one axis into several tops."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.axes import axis_or_legacy_dim


class SliceLayer(Layer):
    """Splits along slice_param.axis (or the deprecated slice_dim) at slice_point, or into equal parts."""

    type = "Slice"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the slice points."""
        self.slice_points = list(self.layer_param.slice_param.slice_point)

    def _sizes(self, length: int, num_tops: int) -> list[int]:
        """The extent of each top along the axis."""
        if not self.slice_points:
            if length % num_tops:
                raise self.error(f"the number of top blobs ({num_tops}) should evenly divide the slice axis "
                                 f"({length}) when no slice_point is given")
            return [length // num_tops] * num_tops
        if len(self.slice_points) != num_tops - 1:
            raise self.error(f"needs one slice_point fewer than tops: "
                             f"{len(self.slice_points)} slice_point(s) for {num_tops} tops")
        bounds = [0, *self.slice_points, length]
        for before, point in zip(bounds[:-2], self.slice_points, strict=True):
            if not before < point < length:
                raise self.error(f"slice_point {point} is out of range: slice points must increase strictly "
                                 f"and lie inside (0, {length}) along the slice axis")
        return [end - start for start, end in zip(bounds[:-1], bounds[1:], strict=True)]

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Each top takes the bottom's shape with its extent along the axis."""
        self.axis = axis_or_legacy_dim(self, bottom[0], "slice_param", "slice_dim")
        shape = bottom[0].shape
        self.sizes = self._sizes(shape[self.axis], len(top))
        for blob, size in zip(top, self.sizes, strict=True):
            blob.reshape(shape[:self.axis] + (size,) + shape[self.axis + 1:])
        if len(top) == 1:
            top[0].share_data(bottom[0])
            top[0].share_diff(bottom[0])

    def _section(self, index: int) -> tuple[slice, ...]:
        start = sum(self.sizes[:index])
        return (slice(None),) * self.axis + (slice(start, start + self.sizes[index]),)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies each section of the bottom into its top."""
        if len(top) == 1:
            return
        x = bottom[0].data_on(side)
        for i, blob in enumerate(top):
            blob.mutable_data_on(side)[...] = x[self._section(i)]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Gathers the top diffs into the bottom diff."""
        if not propagate_down[0] or len(top) == 1:
            return
        dx = bottom[0].mutable_diff_on(side)
        for i, blob in enumerate(top):
            dx[self._section(i)] = blob.diff_on(side)
