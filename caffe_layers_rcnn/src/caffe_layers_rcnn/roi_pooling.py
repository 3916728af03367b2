"""ROIPooling (Fast R-CNN): max pooling of each region of interest into a fixed pooled_h x pooled_w grid.

roi_pooling_param.pad_ratio (zhaoweicai/cascade-rcnn) enlarges each ROI before it is pooled.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.rounding import round_half_away

log = logging.getLogger("caffe.net")

# Caffe's -FLT_MAX: the value a max starts from, and what a bin whose elements are all <= it keeps.
LOWEST = np.float32(np.finfo(np.float32).min)
POOLING_FIELDS = ("pooled_h", "pooled_w", "spatial_scale", "pad_ratio")


def pooling_settings(layer: Layer) -> tuple[tuple[int, int], np.float32, np.float32]:
    """roi_pooling_param's (pooled_h, pooled_w), both checked > 0, spatial_scale and pad_ratio, as float32."""
    param = get_param_block(layer.layer_param, "roi_pooling_param")
    for name in ("pooled_h", "pooled_w"):
        if getattr(param, name) <= 0:
            raise layer.error(f"roi_pooling_param.{name} must be > 0, got {getattr(param, name)}")
    pooled = (int(param.pooled_h), int(param.pooled_w))
    return pooled, np.float32(param.spatial_scale), np.float32(param.pad_ratio)


def cascade_stored_pooling(source: caffe_pb2.LayerParameter) -> Any | None:
    """The roi_pooling_param a zhaoweicai/cascade-rcnn file stores at LayerParameter 147, or None.

    Read with this schema, that number is BVLC's swish_param, whose own field 1 is a float: the fork's fields
    (pooled_h 1 and pooled_w 2 as varints, spatial_scale 3, pad_ratio 4) survive as its unknown fields and are
    decoded here as the pack's ROIPoolingParameter.
    """
    from caffe_layers_rcnn.params import ROIPoolingParameter

    if not source.HasField("swish_param"):
        return None
    return ROIPoolingParameter.FromString(source.swish_param.SerializeToString())


def report_stored_pooling(layer: Layer, source: caffe_pb2.LayerParameter) -> None:
    """Logs what a cascade-rcnn .caffemodel says about the layer's pooling; warns where the net differs."""
    stored = cascade_stored_pooling(source)
    if stored is None:
        return
    ours = get_param_block(layer.layer_param, "roi_pooling_param")
    differ = [f"{name} {getattr(stored, name):g} (file) vs {getattr(ours, name):g} (net)"
              for name in POOLING_FIELDS
              if np.float32(getattr(stored, name)) != np.float32(getattr(ours, name))]
    if differ:
        log.warning("%s: the weights file stores roi_pooling_param at LayerParameter 147 "
                    "(zhaoweicai/cascade-rcnn's number; BVLC's swish_param here) with other settings: %s. "
                    "The net's own settings are used; the layer has no weights to copy", layer.describe(),
                    "; ".join(differ))
    else:
        log.info("%s: the weights file's roi_pooling_param at LayerParameter 147 (zhaoweicai/cascade-rcnn) "
                 "agrees with the net's", layer.describe())


@dataclasses.dataclass
class RoiGeometry:
    """Each ROI's batch index, rounded corners on the feature map and bin sizes, as the fork derives them."""

    batch: Array
    start_h: Array
    start_w: Array
    end_h: Array
    end_w: Array
    bin_h: Array
    bin_w: Array


class ROIPoolingLayer(Layer):
    """caffe-fast-rcnn's ROIPooling: bottoms features (N, C, H, W) and rois (R, 5); top (R, C, ph, pw)."""

    type = "ROIPooling"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads pooled_h, pooled_w (both > 0), spatial_scale and pad_ratio."""
        self.pooled, self.spatial_scale, self.pad_ratio = pooling_settings(self)
        self.argmax: Array | None = None

    def adopt_stored_layer(self, source: caffe_pb2.LayerParameter) -> None:
        """A cascade-rcnn file's roi_pooling_param (at 147) is compared with the net's; differences logged."""
        report_stored_pooling(self, source)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (number of ROIs, channels, pooled_h, pooled_w)."""
        if bottom[1].num_axes < 1 or bottom[1].count != 5 * bottom[1].shape_at(0):
            raise self.error(f"bottom 1 (rois) must hold 5 values [batch index, x1, y1, x2, y2] per ROI, got "
                             f"shape {list(bottom[1].shape)}")
        self.num_rois = bottom[1].shape_at(0)
        top[0].reshape((self.num_rois, bottom[0].shape_at(1), *self.pooled))

    def geometry(self, xp: ArrayModule, rois: Array) -> RoiGeometry:
        """The ROIs' batch indices, rounded corners (ints) and float32 bin sizes.

        With cascade-rcnn's pad_ratio each ROI first grows by (x2 - x1 + 1) * pad_ratio on the left and right
        and (y2 - y1 + 1) * pad_ratio above and below (float32, in input pixels), then is scaled and rounded.
        """
        boxes = rois[:, 1:5]
        if self.pad_ratio != 0:
            pad = (boxes[:, 2:4] - boxes[:, 0:2] + np.float32(1)) * self.pad_ratio
            boxes = xp.concatenate([boxes[:, 0:2] - pad, boxes[:, 2:4] + pad], axis=1)
        corners = round_half_away(xp, boxes * self.spatial_scale).astype(xp.int64)
        start_w, start_h, end_w, end_h = (corners[:, k] for k in range(4))
        # Malformed ROIs (end before start) are forced to 1 x 1.
        height = xp.maximum(end_h - start_h + 1, 1).astype(xp.float32)
        width = xp.maximum(end_w - start_w + 1, 1).astype(xp.float32)
        return RoiGeometry(rois[:, 0].astype(xp.int64), start_h, start_w, end_h, end_w,
                           height / np.float32(self.pooled[0]), width / np.float32(self.pooled[1]))

    def _bin_bounds(self, xp: ArrayModule, start: Array, bin_size: Array, pooled: int,
                    size: int) -> tuple[Array, Array]:
        """(R, pooled) first and one-past-last feature rows (or columns) of every bin, clipped to the map."""
        index = xp.arange(pooled, dtype=xp.float32)
        low = xp.floor(index[None, :] * bin_size[:, None]).astype(xp.int64)
        high = xp.ceil((index[None, :] + 1) * bin_size[:, None]).astype(xp.int64)
        return (xp.clip(low + start[:, None], 0, size), xp.clip(high + start[:, None], 0, size))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Max over each bin, keeping the argmax (h * W + w, -1 for none) for backward."""
        xp = side.xp
        num, channels, height, width = bottom[0].shape
        self.argmax = xp.full(top[0].shape, -1, dtype=xp.int64)
        if self.num_rois == 0:
            return
        g = self.geometry(xp, bottom[1].data_on(side).reshape(self.num_rois, 5))
        if bool(((g.batch < 0) | (g.batch >= num)).any()):
            raise ValueError(f"{self.describe()}: a ROI's batch index is outside [0, {num}): "
                             f"{g.batch.tolist()}")
        row_low, row_high = self._bin_bounds(xp, g.start_h, g.bin_h, self.pooled[0], height)
        col_low, col_high = self._bin_bounds(xp, g.start_w, g.bin_w, self.pooled[1], width)
        row_spans = (row_high - row_low).max(axis=0).tolist()
        col_spans = (col_high - col_low).max(axis=0).tolist()
        # Channels last: each feature position is one contiguous row of channels, gathered for all ROIs.
        features = xp.ascontiguousarray(bottom[0].data_on(side).transpose(0, 2, 3, 1)).reshape(-1, channels)
        out = top[0].mutable_data_on(side)
        for i, row_span in enumerate(row_spans):
            for j, col_span in enumerate(col_spans):
                best = xp.full((self.num_rois, channels), LOWEST, dtype=xp.float32)
                chosen = xp.full((self.num_rois, channels), -1, dtype=xp.int64)
                # Caffe's scan: rows then columns, replacing the max only when strictly greater.
                for dh in range(row_span):
                    row = row_low[:, i] + dh
                    for dw in range(col_span):
                        col = col_low[:, j] + dw
                        inside = (row < row_high[:, i]) & (col < col_high[:, j])
                        position = xp.minimum(row, height - 1) * width + xp.minimum(col, width - 1)
                        values = xp.take(features, g.batch * (height * width) + position, axis=0)
                        better = (values > best) & inside[:, None]
                        xp.copyto(best, values, where=better)
                        xp.copyto(chosen, position[:, None], where=better)
                empty = (row_high[:, i] <= row_low[:, i]) | (col_high[:, j] <= col_low[:, j])
                out[:, :, i, j] = xp.where(empty[:, None], np.float32(0), best)
                self.argmax[:, :, i, j] = chosen

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Adds each top diff to its argmax, with the fork's kernel's checks (ROI extent, feasible bins)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        bottom_diff = bottom[0].mutable_diff_on(side)
        bottom_diff.fill(0)
        if self.num_rois == 0:
            return
        _, channels, height, width = bottom[0].shape
        g = self.geometry(xp, bottom[1].data_on(side).reshape(self.num_rois, 5))
        argmax = self.argmax
        assert argmax is not None  # forward_on set it
        rows, cols = argmax // width, argmax % width

        def per_roi(values: Array) -> Array:
            return values[:, None, None, None]

        # The fork's backward kernel only gathers from elements inside the rounded ROI and from the bins
        # whose (float32) range covers them, so an argmax outside either gets no gradient.
        inside = ((cols >= per_roi(g.start_w)) & (cols <= per_roi(g.end_w))
                  & (rows >= per_roi(g.start_h)) & (rows <= per_roi(g.end_h)))
        feasible = [self._covers(xp, rows - per_roi(g.start_h), per_roi(g.bin_h), self.pooled[0], 2),
                    self._covers(xp, cols - per_roi(g.start_w), per_roi(g.bin_w), self.pooled[1], 3)]
        chosen = (argmax >= 0) & inside & feasible[0] & feasible[1]
        plane = (per_roi(g.batch) * channels + xp.arange(channels)[None, :, None, None]) * (height * width)
        # add.at adds in top order in float32: the same sums, in the same order, as the kernel's loop.
        xp.add.at(bottom_diff.reshape(-1), (plane + argmax)[chosen], top[0].diff_on(side)[chosen])

    @staticmethod
    def _covers(xp: ArrayModule, offset: Array, bin_size: Array, pooled: int, axis: int) -> Array:
        """Whether each top element's bin is in [floor(o / bin), ceil((o + 1) / bin)), clipped to the grid."""
        low = xp.clip(xp.floor(offset.astype(xp.float32) / bin_size), 0, pooled)
        high = xp.clip(xp.ceil((offset + 1).astype(xp.float32) / bin_size), 0, pooled)
        shape = [1, 1, 1, 1]
        shape[axis] = pooled
        index = xp.arange(pooled).reshape(shape)
        return (index >= low) & (index < high)
