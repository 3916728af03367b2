"""DecodeBBox (zhaoweicai/cascade-rcnn): a cascade stage's class-agnostic regression applied to its rois."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.cascade_boxes import read_bbox_reg

# The fork's regression has two groups of four (background, foreground); it outputs the second.
BBOX_CHANNELS = 8


class DecodeBBoxLayer(Layer):
    """Bottoms bbox_pred (N, 8), rois (N, 5) and in TRAIN optionally matched gt; top boxes (N', 5, 1, 1)."""

    type = "DecodeBBox"
    param_block = "bbox_reg_param"
    min_bottom_blobs = 2
    max_bottom_blobs = 3
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads bbox_reg_param's mean and std and decode_bbox_param's gt_iou_thr (TRAIN, third bottom)."""
        self.regression = read_bbox_reg(get_param_block(self.layer_param, "bbox_reg_param"), self.error)
        self.gt_iou_thr = np.float32(get_param_block(self.layer_param, "decode_bbox_param").gt_iou_thr)
        if len(bottom) == 3 and self.phase != caffe_pb2.TRAIN:
            raise self.error("a third bottom (matched ground truth) is for the TRAIN phase only (the fork "
                             "CHECKs this)")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks 8 regression and 5 roi values per row; top (rows, 5, 1, 1) until forward screens them."""
        rows = bottom[0].shape_at(0) if bottom[0].num_axes else 0
        for index, (name, width) in enumerate((("bbox_pred", BBOX_CHANNELS), ("rois", 5))):
            blob = bottom[index]
            if blob.num_axes < 2 or blob.shape_at(0) != rows or blob.count != width * rows:
                raise self.error(f"bottom {index} ({name}) must be ({rows}, {width}) (one row per roi), got "
                                 f"shape {list(blob.shape)}")
        if len(bottom) == 3 and (bottom[2].num_axes < 2 or bottom[2].shape_at(0) != rows):
            raise self.error(f"bottom 2 (matched ground truth) must have {rows} rows, got shape "
                             f"{list(bottom[2].shape)}")
        # The fork reshapes the top like the rois here and to (rows kept, 5, 1, 1) in forward; (rows, 5, 1, 1)
        # now keeps the shape a net sees the same before and after a TEST forward.
        top[0].reshape((rows, 5, 1, 1))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Decodes the second 4-group against each roi (+1 sizes); TRAIN drops inverted, matched-gt rows."""
        xp = side.xp
        rows = bottom[0].shape_at(0)
        rois = bottom[1].data_on(side).reshape(rows, 5)
        deltas = bottom[0].data_on(side).reshape(rows, BBOX_CHANNELS)[:, 4:8]
        mean, std = xp.asarray(self.regression.mean), xp.asarray(self.regression.std)
        d = deltas * std + mean
        one, half, two = np.float32(1), np.float32(0.5), np.float32(2)
        sizes = rois[:, 3:5] - rois[:, 1:3] + one  # (pw, ph)
        centres = half * (rois[:, 3:5] + rois[:, 1:3])
        target_centres = d[:, 0:2] * sizes + centres
        target_sizes = sizes * xp.exp(d[:, 2:4])
        low = target_centres - (target_sizes - one) / two
        high = low + target_sizes - one
        boxes = xp.concatenate([rois[:, 0:1], low, high], axis=1).astype(xp.float32)
        if self.phase == caffe_pb2.TRAIN:
            keep = (boxes[:, 1] <= boxes[:, 3]) & (boxes[:, 2] <= boxes[:, 4])
            if len(bottom) == 3:
                matched = bottom[2].data_on(side).reshape(rows, -1)[:, -1]
                keep &= ~(matched >= self.gt_iou_thr)
            boxes = boxes[keep]
            if int(boxes.shape[0]) == 0:
                raise ValueError(f"{self.describe()}: every box was screened out (inverted, or matched to "
                                 f"ground truth with IoU >= {self.gt_iou_thr}); the fork CHECK-fails here")
        top[0].reshape((int(boxes.shape[0]), 5, 1, 1))
        top[0].mutable_data_on(side).reshape(-1, 5)[...] = boxes
