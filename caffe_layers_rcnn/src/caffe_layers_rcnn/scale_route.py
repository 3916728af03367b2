"""ScaleRoute (zhaoweicai/cascade-rcnn): the rows of the ROIs whose scale is in [low_scale, high_scale)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import EVERY_BOTTOM, Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.cascade_boxes import box_sizes

FLT_MAX = np.float32(np.finfo(np.float32).max)
# The scale a route with neither bound falls back towards.
DEFAULT_MID_SCALE = np.float32(256)


def legacy_shape(blob: Blob) -> tuple[int, int, int]:
    """A blob's (channels, height, width) as Caffe's legacy accessors give them (1 for absent axes)."""
    shape = list(blob.shape) + [1] * (4 - blob.num_axes)
    return shape[1], shape[2], shape[3]


class ScaleRouteLayer(Layer):
    """Bottoms rois (R, 5) and per-ROI blobs (R, ...); tops keep the rows of the ROIs in the scale range."""

    type = "ScaleRoute"
    min_bottom_blobs = 1
    equal_num_bottom_top_blobs = True
    bottom_num_axes = {EVERY_BOTTOM: (1, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads low_scale and high_scale (each optional) and derives the fallback's mid scale as the fork."""
        if any(self.layer_param.propagate_down):
            raise self.error("propagate_down must be false for every bottom: ScaleRoute has no backward (the "
                             "fork CHECKs this)")
        param = get_param_block(self.layer_param, "scale_route_param")
        has_low, has_high = param.HasField("low_scale"), param.HasField("high_scale")
        self.low = np.float32(param.low_scale) if has_low else np.float32(0)
        self.high = np.float32(param.high_scale) if has_high else FLT_MAX
        if has_low and not self.low > 0:
            raise self.error(f"scale_route_param.low_scale must be > 0, got {param.low_scale}")
        if has_high and not self.high < FLT_MAX:
            raise self.error(f"scale_route_param.high_scale must be < FLT_MAX, got {param.high_scale}")
        if not self.high >= self.low:
            raise self.error(f"scale_route_param.high_scale ({self.high}) must be >= low_scale ({self.low})")
        if has_low and has_high:
            self.mid = np.sqrt(self.low * self.high, dtype=np.float32)
        elif has_low or has_high:
            self.mid = self.low if has_low else self.high
        else:
            self.mid = DEFAULT_MID_SCALE
        if not self.mid > 0:
            raise self.error(f"scale_route_param gives a mid scale of {self.mid}: it must be > 0")

    def allow_force_backward(self, bottom_index: int) -> bool:
        """Never: the fork forces every propagate_down to false."""
        return False

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the rows; each top is a placeholder (1, C, H, W) until forward counts the rows routed."""
        rois = bottom[0]
        if rois.num_axes < 2 or legacy_shape(rois) != (5, 1, 1):
            raise self.error(f"bottom 0 (rois) must be (R, 5) [batch index, x1, y1, x2, y2], got shape "
                             f"{list(rois.shape)}")
        for k, blob in enumerate(bottom):
            if blob.shape_at(0) != rois.shape_at(0):
                raise self.error(f"bottom {k} has {blob.shape_at(0)} rows, bottom 0 (rois) "
                                 f"{rois.shape_at(0)}: every bottom holds one row per ROI")
            top[k].reshape((1, *legacy_shape(blob)))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Routes the ROIs with low <= sqrt(size) < high; none: the one closest to the mid scale in log2."""
        xp = side.xp
        num_rois = bottom[0].shape_at(0)
        if num_rois == 0:
            raise ValueError(f"{self.describe()}: no rois to route (the fork CHECK-fails: it always outputs "
                             f"one)")
        rois = bottom[0].data_on(side).reshape(num_rois, 5)
        scales = xp.sqrt(box_sizes(xp, rois[:, 1:5]))
        selected = (scales >= self.low) & (scales < self.high)
        count = int(selected.sum())
        if count == 0:
            # The fork's |log2(scale / mid)|, as |ln| / ln 2 in double (the same order but for near ties).
            # It keeps the first strict minimum below FLT_MAX: an inverted ROI (scale 0) never wins.
            ratio = (scales / self.mid).astype(xp.float64)
            positive = ratio > 0
            distance = xp.abs(xp.log(xp.where(positive, ratio, 1.0))) / np.log(2.0)
            distance = xp.where(positive & (distance < FLT_MAX), distance, xp.inf)
            best = distance.argmin()
            if not bool(distance[best] < xp.inf):
                raise ValueError(f"{self.describe()}: no roi in [{self.low}, {self.high}) and none with a "
                                 f"finite scale to fall back to (the fork CHECK-fails)")
            selected = xp.arange(num_rois) == best
            count = 1
        for blob, out in zip(bottom, top, strict=True):
            out.reshape((count, *legacy_shape(blob)))
            rows = blob.data_on(side).reshape(num_rois, -1)
            out.mutable_data_on(side).reshape(count, -1)[...] = rows[selected]
