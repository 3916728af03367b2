"""BoxGroupOutput (zhaoweicai/cascade-rcnn): region proposals from groups of anchor-free RPN heads."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import EVERY_BOTTOM, Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.cascade_boxes import (
    OVERLAP_MODES,
    BoxRegression,
    grouped_nms,
    rank_within,
    read_bbox_reg,
)

# What the fork outputs when no image has a box left: one roi, and a row of zeros with the scores.
NO_BOX_ROI = np.array([0, 1, 1, 10, 10], dtype=np.float32)


@dataclasses.dataclass(frozen=True)
class BoxGroup:
    """One pair of bottoms' anchors: field widths and heights (K each) and the feature stride."""

    field_w: np.ndarray
    field_h: np.ndarray
    stride: np.float32


@dataclasses.dataclass(frozen=True)
class Candidates:
    """Every image's decoded, clipped boxes in the fork's order: image, then group, anchor, pixel."""

    image: np.ndarray
    boxes: np.ndarray
    scores: np.ndarray


class BoxGroupOutputLayer(Layer):
    """Bottoms (prob_j, bbox_j) pairs, one per box_group_param; tops rois (R, 5, 1, 1) and (R, 6, 1, 1)."""

    type = "BoxGroupOutput"
    min_bottom_blobs = 2
    min_top_blobs = 1
    max_top_blobs = 2
    bottom_num_axes = {EVERY_BOTTOM: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads box_group_output_param's groups, thresholds and limits, and bbox_reg_param's mean and std."""
        param = get_param_block(self.layer_param, "box_group_output_param")
        self.groups = []
        for index, group in enumerate(param.box_group_param):
            field = f"box_group_output_param.box_group_param[{index}]"
            if len(group.field_h) != len(group.field_w):
                raise self.error(f"{field} has {len(group.field_h)} field_h and {len(group.field_w)} field_w "
                                 f"values: one (field_w, field_h) pair per anchor")
            if not group.field_h:
                raise self.error(f"{field} has no field_h/field_w: give at least one anchor")
            if group.stride == 0:
                raise self.error(f"{field}.stride must be > 0 (with 0 every box is clipped away)")
            self.groups.append(BoxGroup(np.asarray(group.field_w, np.float32),
                                        np.asarray(group.field_h, np.float32), np.float32(group.stride)))
        if len(bottom) % 2 or len(bottom) // 2 != len(self.groups):
            raise self.error(f"takes one (prob, bbox) pair of bottoms per box_group_param: "
                             f"{len(self.groups)} groups need {2 * len(self.groups)} bottoms, got "
                             f"{len(bottom)}")
        if param.nms_type not in OVERLAP_MODES:
            raise self.error(f"box_group_output_param.nms_type must be one of {', '.join(OVERLAP_MODES)}, "
                             f"got {param.nms_type!r}")
        for name in ("field_whr", "field_xyr"):
            if not getattr(param, name) > 0:
                raise self.error(f"box_group_output_param.{name} must be > 0, got {getattr(param, name)}")
        self.regression: BoxRegression = read_bbox_reg(get_param_block(self.layer_param, "bbox_reg_param"),
                                                       self.error)
        whr, xyr = np.float32(param.field_whr), np.float32(param.field_xyr)
        # Bounds of the de-normalised deltas: centres within 1/field_xyr of the anchor's size, sizes within
        # a factor field_whr.
        self.xy_bound = (np.float32(-1) / xyr, np.float32(1) / xyr)
        self.wh_bound = (np.log(np.float32(1) / whr), np.log(whr))
        self.fg_thr = np.float32(param.fg_thr)
        self.iou_thr = np.float32(param.iou_thr)
        self.mode = param.nms_type
        self.max_nms = int(param.max_nms_num)
        self.max_post_nms = int(param.max_post_nms_num)
        self.min_size = np.float32(param.min_size)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks each pair against the fork's rules; tops (1, 5, 1, 1) and (1, 6, 1, 1) until forward."""
        anchors0 = len(self.groups[0].field_w)
        self.num_images = bottom[0].shape_at(0) // anchors0
        classes = bottom[0].shape_at(1)
        for j, group in enumerate(self.groups):
            prob, bbox = bottom[2 * j], bottom[2 * j + 1]
            anchors = len(group.field_w)
            where = f"bottoms {2 * j} and {2 * j + 1} (group {j}, {anchors} anchors)"
            if prob.shape_at(0) != anchors * self.num_images or bbox.shape_at(0) != prob.shape_at(0):
                raise self.error(f"{where}: both must have images x anchors = {self.num_images} x {anchors} "
                                 f"rows, got shapes {list(prob.shape)} and {list(bbox.shape)}")
            if prob.shape_at(1) != classes or prob.shape_at(1) < 1:
                raise self.error(f"{where}: the prob bottom must have bottom 0's {classes} channels, got "
                                 f"shape {list(prob.shape)}")
            if bbox.shape_at(1) != 4 or prob.shape[2:] != bbox.shape[2:]:
                raise self.error(f"{where}: the bbox bottom must be (rows, 4, H, W) with the prob bottom's H "
                                 f"and W, got {list(bbox.shape)} against {list(prob.shape)}")
        top[0].reshape((1, 5, 1, 1))
        if len(top) > 1:
            top[1].reshape((1, 6, 1, 1))

    def decode(self, group: BoxGroup, deltas: np.ndarray) -> np.ndarray:
        """One group's boxes (N * K, 4, H, W) from its deltas (N * K, 4, H, W): bounded, around each pixel."""
        rows, _, height, width = deltas.shape
        anchors = len(group.field_w)
        d = deltas * self.regression.std[None, :, None, None] + self.regression.mean[None, :, None, None]
        dxy = np.minimum(self.xy_bound[1], np.maximum(self.xy_bound[0], d[:, 0:2]))
        dwh = np.minimum(self.wh_bound[1], np.maximum(self.wh_bound[0], d[:, 2:4]))
        field = np.stack([np.tile(group.field_w, rows // anchors), np.tile(group.field_h, rows // anchors)],
                         axis=1)[:, :, None, None]  # (rows, 2, 1, 1): fw, fh of each row's anchor
        half = np.float32(0.5)
        grid = np.stack(np.broadcast_arrays((np.arange(width, dtype=np.float32) + half)[None, :],
                                            (np.arange(height, dtype=np.float32) + half)[:, None]))
        centres = dxy * field + (grid * group.stride)[None]
        sizes = field * np.exp(dwh)
        low = centres - sizes / np.float32(2)
        high = low + sizes - np.float32(1)
        return np.concatenate([low, high], axis=1).astype(np.float32)

    def candidates(self, bottom: Sequence[Blob]) -> Candidates:
        """Every box with score >= fg_thr, clipped to its map x stride, at least min_size wide and high."""
        images, boxes, scores = [], [], []
        for j, group in enumerate(self.groups):
            prob, bbox = bottom[2 * j].cpu_data(), bottom[2 * j + 1].cpu_data()
            rows, _, height, width = bbox.shape
            decoded = self.decode(group, bbox)
            # (N, K * H * W) per image, anchor then pixel, so concatenating groups keeps the fork's order.
            boxes.append(decoded.reshape(self.num_images, -1, 4, height * width).transpose(0, 1, 3, 2)
                         .reshape(self.num_images, -1, 4))
            scores.append((np.float32(1) - prob[:, 0]).reshape(self.num_images, -1))
            limit = np.array([width, height, width, height], dtype=np.float32) * group.stride
            boxes[-1] = np.concatenate([np.maximum(np.float32(0), boxes[-1][..., 0:2]),
                                        np.minimum(limit[2:], boxes[-1][..., 2:4])], axis=-1)
            images.append(np.broadcast_to(np.arange(self.num_images)[:, None], scores[-1].shape))
        all_boxes = np.concatenate(boxes, axis=1).reshape(-1, 4)
        all_scores = np.concatenate(scores, axis=1).reshape(-1)
        all_images = np.concatenate(images, axis=1).reshape(-1)
        one = np.float32(1)
        keep = ((all_scores >= self.fg_thr)
                & (all_boxes[:, 2] - all_boxes[:, 0] + one >= self.min_size)
                & (all_boxes[:, 3] - all_boxes[:, 1] + one >= self.min_size))
        return Candidates(all_images[keep], all_boxes[keep], all_scores[keep])

    # On the host, as the fork's Forward_cpu: sorting and the greedy NMS are sequential and data-dependent.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Per image: the max_nms_num best boxes, greedy NMS at iou_thr, the first max_post_nms_num kept."""
        found = self.candidates(bottom)
        # Image by image, best score first (a stable sort: the fork's partial_sort may order ties otherwise).
        order = np.lexsort((-found.scores, found.image))
        if self.max_nms > 0:
            order = order[rank_within(found.image[order]) < self.max_nms]
        image, boxes, scores = found.image[order], found.boxes[order], found.scores[order]
        kept = grouped_nms(boxes, image, self.iou_thr, self.mode)
        if self.max_post_nms > 0:
            kept = kept[rank_within(image[kept]) < self.max_post_nms]
        if kept.size == 0:
            top[0].reshape((1, 5, 1, 1))
            top[0].mutable_cpu_data().reshape(5)[...] = NO_BOX_ROI
            if len(top) > 1:
                top[1].reshape((1, 6, 1, 1))
                top[1].mutable_cpu_data()[...] = 0
            return
        rows = np.concatenate([image[kept, None].astype(np.float32), boxes[kept], scores[kept, None]], axis=1)
        top[0].reshape((rows.shape[0], 5, 1, 1))
        top[0].mutable_cpu_data().reshape(-1, 5)[...] = rows[:, :5]
        if len(top) > 1:
            top[1].reshape((rows.shape[0], 6, 1, 1))
            top[1].mutable_cpu_data().reshape(-1, 6)[...] = rows
