"""Region proposals as inisis/caffe's C++ ProposalLayer computes them (PVANet's caffe-fast-rcnn), in float32.

Not py-faster-rcnn's algorithm (`py_faster_rcnn_proposals.py`): other anchor rounding, no default ratios or
scales, small boxes kept with score 0, im_info[2] ignored, an IoU that is 0 for boxes that do not touch, every
batch item. The layer that runs it is `inisis_proposal_layer.ProposalLayer`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from caffe_core.array_types import Array
from caffe_layers_rcnn.anchors import shifted_anchors
from caffe_layers_rcnn.boxes import bbox_transform_inv, c_exp, clip_boxes, size_mask
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings, map_problem


def inisis_anchors(base_size: int, ratios: Sequence[float], scales: Sequence[float]) -> np.ndarray:
    """(len(ratios) * len(scales), 4) float32 anchors, ratio-major, as the fork's generate_anchors.

    Around the centre (base_size - 1) / 2, half sizes 0.5 * ROUND(ratio_w * scale / base_size - 1) with
    ratio_w = sqrt(base_size^2 / ratio), ratio_h = ratio_w * ratio and ROUND(x) = (int)(x + 0.5).
    """
    ratio_values = np.asarray(ratios, dtype=np.float32)
    scale_values = np.asarray(scales, dtype=np.float32)
    centre = np.float32(0.5) * (np.float32(base_size) - np.float32(1))
    ratio_w = np.sqrt(np.float32(base_size * base_size) / ratio_values)
    ratio_h = ratio_w * ratio_values

    def halves(sides: np.ndarray) -> np.ndarray:
        # The float32 product is divided in double; the int cast truncates toward zero.
        sizes = (sides[:, None] * scale_values[None, :]).astype(np.float64) / base_size - 1.0
        return np.float32(0.5) * np.trunc(sizes + 0.5).astype(np.float32)

    half_w, half_h = halves(ratio_w), halves(ratio_h)
    anchors = np.stack([centre - half_w, centre - half_h, centre + half_w, centre + half_h], axis=-1)
    return anchors.reshape((-1, 4))


def inisis_bottom_problem(score_shape: tuple[int, ...], delta_shape: tuple[int, ...], info_count: int,
                          num_anchors: int) -> str | None:
    """What is wrong with the bottoms' shapes for the fork's layer and num_anchors anchors, or None."""
    problem = map_problem(score_shape, delta_shape, num_anchors)
    if problem:
        return problem
    if info_count < 2:
        return f"bottom 2 (im_info) must hold at least [height, width], got {info_count} values"
    return None


def inisis_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of boxes a and b (broadcast; x1, y1, x2, y2 last) as the fork's: +1 pixel sides, 0 when apart."""
    apart = ((a[..., 0] > b[..., 2]) | (a[..., 1] > b[..., 3])
             | (a[..., 2] < b[..., 0]) | (a[..., 3] < b[..., 1]))
    zero = np.zeros((), dtype=a.dtype)
    width = np.maximum(zero, np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]) + 1)
    height = np.maximum(zero, np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]) + 1)
    inter = width * height
    area_a = (a[..., 2] - a[..., 0] + 1) * (a[..., 3] - a[..., 1] + 1)
    area_b = (b[..., 2] - b[..., 0] + 1) * (b[..., 3] - b[..., 1] + 1)
    return np.where(apart, zero, inter / (area_a + area_b - inter))


def inisis_nms(boxes: np.ndarray, threshold: np.floating, limit: int) -> np.ndarray:
    """(N, P) mask of the boxes each item keeps from its (N, P, 4) boxes sorted best first, at most limit.

    The fork's nms_cpu: walking down the list, a box not yet suppressed is kept and suppresses every later
    box whose IoU with it is above threshold; the walk stops after limit boxes.
    """
    num, count = boxes.shape[:2]
    items = np.arange(num)
    positions = np.arange(count)
    alive = np.ones((num, count), dtype=bool)
    kept = np.zeros((num, count), dtype=bool)
    for _ in range(min(count, limit)):
        # Every box before an item's first waiting box is kept or suppressed: that box is the walk's next.
        waiting = alive & ~kept
        # A reduction over axis 1 of the 2-D mask: an (N,) array, never the scalar the stubs allow for.
        found = cast(Array, waiting.any(axis=1))
        if not found.any():
            break
        current = waiting.argmax(axis=1)
        kept[items[found], current[found]] = True
        overlap = inisis_iou(boxes[items, current][:, None, :], boxes)
        alive &= ~((overlap > threshold) & (positions[None, :] > current[:, None]) & found[:, None])
    return kept


def inisis_propose(scores_map: np.ndarray, deltas_map: np.ndarray, im_info: np.ndarray, anchors: np.ndarray,
                   settings: ProposalSettings) -> tuple[np.ndarray, np.ndarray]:
    """rois (R, 5) [item, x1, y1, x2, y2] and scores (R,), float32: each item's, best first, item by item."""
    num, _, height, width = scores_map.shape
    num_anchors = anchors.shape[0]
    # The fork reads channels [A, 2A) (foreground) of each item; rows are ordered (h, w, anchor).
    scores = scores_map[:, num_anchors:2 * num_anchors].astype(np.float32, copy=False)
    scores = scores.transpose((0, 2, 3, 1)).reshape((num, -1))
    deltas = deltas_map.astype(np.float32, copy=False).transpose((0, 2, 3, 1)).reshape((-1, 4))
    boxes = np.tile(shifted_anchors(anchors, height, width, settings.feat_stride), (num, 1))
    boxes = bbox_transform_inv(boxes, deltas, exp=c_exp)
    info = im_info.astype(np.float32, copy=False).reshape(-1)
    # Every item is clipped to the first image's size: the fork never advances its im_info pointer.
    boxes = clip_boxes(boxes, info[0], info[1])
    # Small boxes stay, scored 0: transform_box's 0/1 answer multiplies the score (scale 1, not im_info[2]).
    scores = scores * size_mask(boxes, np.float32(settings.min_size)).astype(np.float32).reshape((num, -1))
    order = np.argsort(-scores, axis=1, kind="stable")[:, :settings.pre_nms_topn]
    boxes = np.take_along_axis(boxes.reshape((num, -1, 4)), order[..., None], axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    kept = inisis_nms(boxes, np.float32(settings.nms_thresh), settings.post_nms_topn)
    items = np.nonzero(kept)[0].astype(np.float32)
    return np.column_stack([items, boxes[kept]]).astype(np.float32, copy=False), scores[kept]
