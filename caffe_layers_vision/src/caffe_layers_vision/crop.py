"""Caffe's Crop layer: crops bottom 0 to the shape of bottom 1 from a given axis on, at given offsets."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class CropLayer(Layer):
    """Takes the window of bottom 0 of bottom 1's size on every axis from crop_param.axis on."""

    type = "Crop"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the axis and the number of offsets."""
        crop = self.layer_param.crop_param
        try:
            self.start_axis = bottom[0].canonical_axis_index(crop.axis)
        except ValueError as err:
            raise self.error(f"crop_param.axis: {err}") from err
        offsets = list(crop.offset)
        if len(offsets) > 1 and self.start_axis + len(offsets) != bottom[0].num_axes:
            raise self.error(f"number of offset values specified ({len(offsets)}) must be equal to the "
                             f"number of dimensions following axis {self.start_axis} "
                             f"({bottom[0].num_axes - self.start_axis})")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: bottom 0's leading axes, then bottom 1's sizes; checks that each window fits."""
        if bottom[1].num_axes != bottom[0].num_axes:
            raise self.error(f"the reference blob must have as many axes as the input: shapes "
                             f"{list(bottom[0].shape)} and {list(bottom[1].shape)}")
        offsets = list(self.layer_param.crop_param.offset)
        shape = list(bottom[0].shape)
        self.window: list[slice] = []
        for axis in range(bottom[0].num_axes):
            offset = 0
            if axis >= self.start_axis:
                shape[axis] = bottom[1].shape_at(axis)
                if offsets:
                    offset = offsets[0] if len(offsets) == 1 else offsets[axis - self.start_axis]
                if bottom[0].shape_at(axis) - offset < shape[axis]:
                    raise self.error(f"invalid crop parameters in dimension {axis}: offset {offset} + size "
                                     f"{shape[axis]} exceeds the input size {bottom[0].shape_at(axis)}")
            self.window.append(slice(offset, offset + shape[axis]))
        top[0].reshape(shape)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the window."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)[tuple(self.window)]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Zero outside the window, the top diff inside; the reference blob gets no gradient."""
        if not propagate_down[0]:
            return
        diff = bottom[0].mutable_diff_on(side)
        diff.fill(0)
        diff[tuple(self.window)] = top[0].diff_on(side)
