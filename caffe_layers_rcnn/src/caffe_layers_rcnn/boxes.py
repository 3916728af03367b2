"""py-faster-rcnn's box arithmetic in float32: bbox_transform_inv, clip_boxes, the size filter and NMS.

Decoding, clipping and the size test are also inisis/caffe's transform_box (the same float32 operations).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def c_exp(values: np.ndarray) -> np.ndarray:
    """exp rounded once to the values' dtype, as C's expf gives it (numpy's float32 exp may be ulps off)."""
    return np.exp(values.astype(np.float64)).astype(values.dtype)


def bbox_transform_inv(boxes: np.ndarray, deltas: np.ndarray,
                       exp: Callable[[np.ndarray], np.ndarray] = np.exp) -> np.ndarray:
    """Boxes moved by (dx, dy, dw, dh) deltas, in the deltas' dtype with the +1 pixel width convention.

    `exp` scales the sizes: numpy's, as py-faster-rcnn; `c_exp` for the C++ forks.
    """
    if boxes.shape[0] == 0:
        return np.zeros((0, deltas.shape[1]), dtype=deltas.dtype)
    boxes = boxes.astype(deltas.dtype, copy=False)
    widths = boxes[:, 2] - boxes[:, 0] + 1.0
    heights = boxes[:, 3] - boxes[:, 1] + 1.0
    ctr_x = boxes[:, 0] + 0.5 * widths
    ctr_y = boxes[:, 1] + 0.5 * heights
    pred_ctr_x = deltas[:, 0::4] * widths[:, None] + ctr_x[:, None]
    pred_ctr_y = deltas[:, 1::4] * heights[:, None] + ctr_y[:, None]
    pred_w = exp(deltas[:, 2::4]) * widths[:, None]
    pred_h = exp(deltas[:, 3::4]) * heights[:, None]
    out = np.zeros(deltas.shape, dtype=deltas.dtype)
    out[:, 0::4] = pred_ctr_x - 0.5 * pred_w
    out[:, 1::4] = pred_ctr_y - 0.5 * pred_h
    out[:, 2::4] = pred_ctr_x + 0.5 * pred_w
    out[:, 3::4] = pred_ctr_y + 0.5 * pred_h
    return out


def clip_boxes(boxes: np.ndarray, image_height: np.floating, image_width: np.floating) -> np.ndarray:
    """Boxes clipped in place to [0, width - 1] x [0, height - 1]."""
    for first, limit in ((0, image_width), (1, image_height)):
        for column in (first, first + 2):
            boxes[:, column::4] = np.maximum(np.minimum(boxes[:, column::4], limit - 1), 0)
    return boxes


def size_mask(boxes: np.ndarray, min_size: np.floating) -> np.ndarray:
    """Whether each box's width and height (+1 convention) are both at least min_size."""
    widths = boxes[:, 2] - boxes[:, 0] + 1
    heights = boxes[:, 3] - boxes[:, 1] + 1
    return (widths >= min_size) & (heights >= min_size)


def large_enough(boxes: np.ndarray, min_size: np.floating) -> np.ndarray:
    """Indices of the boxes whose width and height (+1 convention) are both at least min_size."""
    return np.where(size_mask(boxes, min_size))[0]


# An overlap measure for nms: (index of the box kept, indices of the boxes still in play) -> their overlaps.
Overlap = Callable[[np.intp, np.ndarray], np.ndarray]


def nms(boxes: np.ndarray, scores: np.ndarray, threshold: float | np.float32, limit: int = 0,
        overlap: Overlap | None = None) -> np.ndarray:
    """Greedy NMS (py_cpu_nms): indices kept, best score first; IoU > threshold suppresses; +1 pixel areas.

    With limit > 0 it stops after `limit` boxes (the first `limit` of the full result). `overlap` replaces
    py-faster-rcnn's IoU with another measure (a fork's), keeping the greedy loop.
    """
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    areas = (x2 - x1 + 1) * (y2 - y1 + 1)

    def iou(i: np.intp, rest: np.ndarray) -> np.ndarray:
        widths = np.maximum(0.0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]) + 1)
        heights = np.maximum(0.0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]) + 1)
        inter = widths * heights
        return inter / (areas[i] + areas[rest] - inter)

    measure = iou if overlap is None else overlap
    order = scores.argsort()[::-1]
    threshold = np.float32(threshold) if boxes.dtype == np.float32 else threshold
    keep: list[np.intp] = []
    while order.size > 0 and (limit <= 0 or len(keep) < limit):
        i = order[0]
        keep.append(i)
        rest = order[1:]
        order = rest[measure(i, rest) <= threshold]
    return np.asarray(keep, dtype=np.int64)
