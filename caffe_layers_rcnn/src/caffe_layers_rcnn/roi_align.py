"""ROIAlign (zhaoweicai/cascade-rcnn): bilinear samples of each ROI at the corners of its pooled bins."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_rcnn.roi_pooling import pooling_settings, report_stored_pooling


@dataclasses.dataclass
class Taps:
    """For every (roi, grid row, grid column): the four feature positions sampled and their weights.

    `rows`/`cols` hold the (floor, ceil) neighbours, (R, gh, gw, 2) each; `weights` (R, gh, gw, 4) is
    (w00, w10, w01, w11) in the fork's order (top-left, top-right, bottom-left, bottom-right), zero for
    samples the fork sets to 0 (a malformed ROI, a point off the map).
    """

    batch: Array
    rows: Array
    cols: Array
    weights: Array


class ROIAlignLayer(Layer):
    """cascade-rcnn's ROIAlign: features (N, C, H, W), rois (R, 5); top (R, C, pooled_h + 1, pooled_w + 1)."""

    type = "ROIAlign"
    param_block = "roi_pooling_param"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads roi_pooling_param: pooled_h, pooled_w (both > 0), spatial_scale and pad_ratio."""
        self.pooled, self.spatial_scale, self.pad_ratio = pooling_settings(self)

    def adopt_stored_layer(self, source: caffe_pb2.LayerParameter) -> None:
        """The fork's file stores roi_pooling_param at 147: compared with the net's, a difference logged."""
        report_stored_pooling(self, source)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (number of ROIs, channels, pooled_h + 1, pooled_w + 1), the grid of bin corners."""
        if bottom[1].num_axes < 1 or bottom[1].count != 5 * bottom[1].shape_at(0):
            raise self.error(f"bottom 1 (rois) must hold 5 values [batch index, x1, y1, x2, y2] per ROI, got "
                             f"shape {list(bottom[1].shape)}")
        self.num_rois = bottom[1].shape_at(0)
        top[0].reshape((self.num_rois, bottom[0].shape_at(1), self.pooled[0] + 1, self.pooled[1] + 1))

    def taps(self, xp: ArrayModule, rois: Array, num: int, height: int, width: int) -> Taps:
        """The fork's sampling arithmetic (float32) for every grid point of every ROI."""
        batch = rois[:, 0].astype(xp.int64)  # C's int conversion truncates toward zero, as astype does
        if bool(((batch < 0) | (batch >= num)).any()):
            raise ValueError(f"{self.describe()}: a ROI's batch index is outside [0, {num}): "
                             f"{batch.tolist()}")
        one, half = np.float32(1), np.float32(0.5)
        boxes = rois[:, 1:5]
        pad = (boxes[:, 2:4] - boxes[:, 0:2] + one) * self.pad_ratio
        start = (boxes[:, 0:2] - pad) * self.spatial_scale - half  # (R, 2): x, y
        end = (boxes[:, 2:4] + pad) * self.spatial_scale - half
        extent = end - start
        malformed = (extent <= 0).any(axis=1)
        pooled = xp.asarray([self.pooled[1], self.pooled[0]], dtype=xp.float32)
        bin_size = extent / pooled
        # Sample positions: start + index * bin, (R, gh) rows and (R, gw) columns.
        ys = start[:, 1:2] + xp.arange(self.pooled[0] + 1, dtype=xp.float32)[None, :] * bin_size[:, 1:2]
        xs = start[:, 0:1] + xp.arange(self.pooled[1] + 1, dtype=xp.float32)[None, :] * bin_size[:, 0:1]
        row_taps, row_weights, row_off = self._axis(xp, ys, height)
        col_taps, col_weights, col_off = self._axis(xp, xs, width)
        zero = (malformed[:, None, None] | row_off[:, :, None] | col_off[:, None, :])
        # Weights in the fork's order: (1-lw)(1-lh), lw(1-lh), (1-lw)lh, lw lh.
        weights = (row_weights[:, :, None, :, None] * col_weights[:, None, :, None, :])
        weights = weights.reshape(*zero.shape, 4)
        weights = xp.where(zero[..., None], np.float32(0), weights).astype(xp.float32)
        return Taps(batch, row_taps, col_taps, weights)

    @staticmethod
    def _axis(xp: ArrayModule, points: Array, size: int) -> tuple[Array, Array, Array]:
        """One axis of the sampling: (floor, ceil) neighbours, (1 - l, l) weights, and points off the map."""
        off = (points < np.float32(-0.5)) | (points > np.float32(size - 0.5))
        low = xp.floor(points)
        clamped = xp.clip(points, np.float32(0), np.float32(size - 1))
        low_index = xp.clip(low.astype(xp.int64), 0, size - 1)
        high_index = xp.clip(low.astype(xp.int64) + 1, 0, size - 1)
        fraction = (clamped - low_index.astype(xp.float32)).astype(xp.float32)
        taps = xp.stack([low_index, high_index], axis=-1)
        weights = xp.stack([np.float32(1) - fraction, fraction], axis=-1)
        # Points off the map may hold any neighbours: their weights are zeroed; keep the indices in range.
        return taps, weights, off

    def _flat_positions(self, xp: ArrayModule, taps: Taps, height: int, width: int) -> Array:
        """(R, gh, gw, 4) rows of the channels-last feature table: batch * H * W + row * W + col."""
        rows = taps.rows[:, :, None, :, None]
        cols = taps.cols[:, None, :, None, :]
        position = (rows * width + cols).reshape(*taps.weights.shape)
        return taps.batch[:, None, None, None] * (height * width) + position

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Each grid point: w00 v00 + w10 v10 + w01 v01 + w11 v11 (summed in that order, float32)."""
        if self.num_rois == 0:
            return
        xp = side.xp
        num, channels, height, width = bottom[0].shape
        taps = self.taps(xp, bottom[1].data_on(side).reshape(self.num_rois, 5), num, height, width)
        positions = self._flat_positions(xp, taps, height, width)
        features = xp.ascontiguousarray(bottom[0].data_on(side).transpose(0, 2, 3, 1)).reshape(-1, channels)
        total = xp.take(features, positions[..., 0], axis=0) * taps.weights[..., 0, None]
        for k in range(1, 4):
            total = total + xp.take(features, positions[..., k], axis=0) * taps.weights[..., k, None]
        top[0].mutable_data_on(side)[...] = total.transpose(0, 3, 1, 2)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The adjoint of the sampling (the fork's GPU kernel): each tap gets weight x top diff; rois none."""
        if not propagate_down[0]:
            return
        xp = side.xp
        bottom_diff = bottom[0].mutable_diff_on(side)
        bottom_diff.fill(0)
        if self.num_rois == 0:
            return
        num, channels, height, width = bottom[0].shape
        taps = self.taps(xp, bottom[1].data_on(side).reshape(self.num_rois, 5), num, height, width)
        positions = self._flat_positions(xp, taps, height, width)  # (R, gh, gw, 4)
        top_diff = top[0].diff_on(side).transpose(0, 2, 3, 1)  # (R, gh, gw, C)
        contributions = taps.weights[..., :, None] * top_diff[..., None, :]  # (R, gh, gw, 4, C)
        # Channels-last table of the bottom diff: row b * H * W + h * W + w, column c.
        table = xp.zeros((num * height * width, channels), dtype=xp.float32)
        xp.add.at(table, positions.reshape(-1), contributions.reshape(-1, channels))
        bottom_diff[...] = table.reshape(num, height, width, channels).transpose(0, 3, 1, 2)
