"""PSROIPooling (R-FCN): position-sensitive average pooling of each ROI into a group_size^2 grid."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.rounding import round_half_away

REQUIRED = ("spatial_scale", "output_dim", "group_size")


@dataclasses.dataclass
class Bins:
    """Every output's batch index, input channel and clipped [start, end) rows and columns, and its area."""

    batch: Array
    channel: Array
    row_start: Array
    row_end: Array
    col_start: Array
    col_end: Array
    area: Array


class PSROIPoolingLayer(Layer):
    """R-FCN's PSROIPooling: output (r, c, i, j) averages bin (i, j) of channel (c * g + i) * g + j."""

    type = "PSROIPooling"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the three required fields; output_dim and group_size must be > 0."""
        param = get_param_block(self.layer_param, "psroi_pooling_param")
        missing = [name for name in REQUIRED if not param.HasField(name)]
        if missing:
            raise self.error(f"psroi_pooling_param must set {', '.join(missing)} (R-FCN declares "
                             f"spatial_scale, output_dim and group_size required)")
        for name in ("output_dim", "group_size"):
            if getattr(param, name) <= 0:
                raise self.error(f"psroi_pooling_param.{name} must be > 0, got {getattr(param, name)}")
        self.spatial_scale = np.float32(param.spatial_scale)
        self.output_dim = param.output_dim
        self.group_size = param.group_size
        self.bins: Bins | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (number of ROIs, output_dim, group_size, group_size)."""
        expected = self.output_dim * self.group_size * self.group_size
        if bottom[0].shape_at(1) != expected:
            raise self.error(f"bottom 0 has {bottom[0].shape_at(1)} channels; psroi_pooling_param needs "
                             f"output_dim * group_size^2 = {self.output_dim} * {self.group_size}^2 = "
                             f"{expected}")
        if bottom[1].num_axes < 1 or bottom[1].count != 5 * bottom[1].shape_at(0):
            raise self.error(f"bottom 1 (rois) must hold 5 values [batch index, x1, y1, x2, y2] per ROI, got "
                             f"shape {list(bottom[1].shape)}")
        self.num_rois = bottom[1].shape_at(0)
        top[0].reshape((self.num_rois, self.output_dim, self.group_size, self.group_size))

    def _bins(self, xp: ArrayModule, rois: Array, height: int, width: int) -> Bins:
        """The fork's float32 bin arithmetic, broadcast to (R, output_dim, group_size, group_size)."""
        g = self.group_size
        rounded = round_half_away(xp, rois[:, 1:5]).astype(xp.float32)
        start_w, start_h = rounded[:, 0] * self.spatial_scale, rounded[:, 1] * self.spatial_scale
        end_w = (rounded[:, 2] + np.float32(1)) * self.spatial_scale
        end_h = (rounded[:, 3] + np.float32(1)) * self.spatial_scale
        # Too small ROIs are widened to 0.1 so no bin size is zero.
        bin_h = xp.maximum(end_h - start_h, np.float32(0.1)) / np.float32(g)
        bin_w = xp.maximum(end_w - start_w, np.float32(0.1)) / np.float32(g)
        index = xp.arange(g, dtype=xp.float32)

        def bounds(start: Array, bin_size: Array, size: int) -> tuple[Array, Array]:
            low = xp.floor(index[None, :] * bin_size[:, None] + start[:, None]).astype(xp.int64)
            high = xp.ceil((index[None, :] + 1) * bin_size[:, None] + start[:, None]).astype(xp.int64)
            return xp.clip(low, 0, size), xp.clip(high, 0, size)

        row_start, row_end = (b[:, None, :, None] for b in bounds(start_h, bin_h, height))
        col_start, col_end = (b[:, None, None, :] for b in bounds(start_w, bin_w, width))
        shape = (self.num_rois, self.output_dim, g, g)
        row_start, row_end = xp.broadcast_to(row_start, shape), xp.broadcast_to(row_end, shape)
        col_start, col_end = xp.broadcast_to(col_start, shape), xp.broadcast_to(col_end, shape)
        channel = xp.broadcast_to(xp.arange(self.output_dim * g * g).reshape(1, self.output_dim, g, g), shape)
        area = (xp.maximum(row_end - row_start, 0) * xp.maximum(col_end - col_start, 0)).astype(xp.float32)
        batch = xp.broadcast_to(rois[:, 0].astype(xp.int64)[:, None, None, None], shape)
        return Bins(batch, channel, row_start, row_end, col_start, col_end, area)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Each output: the mean of its bin in its own channel (0 for an empty bin), from integral images."""
        xp = side.xp
        num, channels, height, width = bottom[0].shape
        if self.num_rois == 0:
            return
        rois = bottom[1].data_on(side).reshape(self.num_rois, 5)
        b = self.bins = self._bins(xp, rois, height, width)
        if bool(((b.batch < 0) | (b.batch >= num)).any()):
            raise ValueError(f"{self.describe()}: a ROI's batch index is outside [0, {num}): "
                             f"{rois[:, 0].tolist()}")
        integral = xp.zeros((num, channels, height + 1, width + 1), dtype=xp.float64)
        integral[:, :, 1:, 1:] = bottom[0].data_on(side).astype(xp.float64).cumsum(axis=2).cumsum(axis=3)

        def corner(rows: Array, cols: Array) -> Array:
            return integral[b.batch, b.channel, rows, cols]

        total = (corner(b.row_end, b.col_end) - corner(b.row_start, b.col_end)
                 - corner(b.row_end, b.col_start) + corner(b.row_start, b.col_start)).astype(xp.float32)
        empty = b.area == 0
        top[0].mutable_data_on(side)[...] = xp.where(empty, np.float32(0), total / xp.where(empty, 1, b.area))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Spreads each top diff / bin area over its bin (a 2-D difference array, summed up); rois get 0."""
        if not propagate_down[0]:
            return
        xp = side.xp
        num, channels, height, width = bottom[0].shape
        # The fork clears the rois' diff whenever it back-propagates to the score maps.
        bottom[1].mutable_diff_on(side).fill(0)
        bottom_diff = bottom[0].mutable_diff_on(side)
        if self.num_rois == 0:
            bottom_diff.fill(0)
            return
        b = self.bins
        assert b is not None  # forward_on set them
        empty = b.area == 0
        share = xp.where(empty, np.float32(0), top[0].diff_on(side) / xp.where(empty, 1, b.area))
        # Each bin adds +share at its top-left and bottom-right corners and -share at the other two; the
        # 2-D prefix sum (in double) then gives every element the sum of the bins covering it. The corners
        # accumulate in float32, the type every device's atomic add takes.
        corners = xp.zeros((num, channels, height + 1, width + 1), dtype=xp.float32)
        flat = corners.reshape(-1)
        plane = (b.batch * channels + b.channel) * ((height + 1) * (width + 1))
        for rows, cols, sign in ((b.row_start, b.col_start, 1), (b.row_start, b.col_end, -1),
                                 (b.row_end, b.col_start, -1), (b.row_end, b.col_end, 1)):
            xp.add.at(flat, (plane + rows * (width + 1) + cols).reshape(-1), (sign * share).reshape(-1))
        summed = corners.astype(xp.float64).cumsum(axis=2).cumsum(axis=3)
        bottom_diff[...] = summed[:, :, :height, :width]
