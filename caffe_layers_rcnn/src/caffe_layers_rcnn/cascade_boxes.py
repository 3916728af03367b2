"""zhaoweicai/cascade-rcnn's box arithmetic (its bbox_util.cpp) in float32, for BoxGroupOutput and DecodeBBox.

Boxes are pixel corners (x1, y1, x2, y2) with the +1 convention: a box's width is x2 - x1 + 1. The fork's
overlap differs from py-faster-rcnn's (`boxes.nms`'s default): an inverted box overlaps nothing, the
intersection is empty when x1 > x2 or y1 >= y2 (not symmetric in x and y), and the union may be the smaller
box ("IOMU") or the first box ("IOFU").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_layers_rcnn.boxes import nms

# The overlap modes of the fork's nms_type; it treats any other string as "IOU".
OVERLAP_MODES = ("IOU", "IOMU", "IOFU")


@dataclasses.dataclass(frozen=True)
class BoxRegression:
    """bbox_reg_param's de-normalisation: a regression output d becomes d * std + mean (4 float32 each)."""

    mean: np.ndarray
    std: np.ndarray


def read_bbox_reg(param: Any, describe: Callable[[str], Exception]) -> BoxRegression:
    """bbox_reg_param's bbox_mean and bbox_std (4 values each, std > 0), or the fork's defaults 0 and 1."""
    means = list(param.bbox_mean)
    stds = list(param.bbox_std)
    if not means and not stds:
        return BoxRegression(np.zeros(4, np.float32), np.ones(4, np.float32))
    if not means or not stds:
        given, missing = ("bbox_mean", "bbox_std") if means else ("bbox_std", "bbox_mean")
        raise describe(f"bbox_reg_param gives {given} but no {missing}: give both (4 values each) or neither "
                       f"(the fork would then silently use mean 0 and std 1 for both)")
    if len(means) != 4 or len(stds) != 4:
        raise describe(f"bbox_reg_param needs 4 bbox_mean and 4 bbox_std values (dx, dy, dw, dh), got "
                       f"{len(means)} and {len(stds)}")
    if any(not s > 0 for s in stds):
        raise describe(f"bbox_reg_param.bbox_std values must be > 0, got {stds}")
    return BoxRegression(np.asarray(means, np.float32), np.asarray(stds, np.float32))


def box_sizes(xp: ArrayModule, boxes: Array) -> Array:
    """BBoxSize: (x2 - x1 + 1) * (y2 - y1 + 1) in float32, 0 for an inverted box; boxes (..., 4)."""
    one = np.float32(1)
    x1, y1, x2, y2 = (boxes[..., k] for k in range(4))
    inverted = (x2 < x1) | (y2 < y1)
    return xp.where(inverted, np.float32(0), ((x2 - x1 + one) * (y2 - y1 + one)).astype(xp.float32))


def fork_overlaps(boxes: np.ndarray, sizes: np.ndarray, first: int, others: np.ndarray,
                  mode: str) -> np.ndarray:
    """JaccardOverlap(boxes[first], boxes[o]) for every o in others, in the fork's float32 arithmetic.

    `sizes` are the boxes' `box_sizes`.
    """
    a = boxes[first]
    b = boxes[others]
    one, zero = np.float32(1), np.float32(0)
    size_a, size_b = sizes[first], sizes[others]
    ix1 = np.maximum(a[0], b[:, 0])
    iy1 = np.maximum(a[1], b[:, 1])
    ix2 = np.minimum(a[2], b[:, 2])
    iy2 = np.minimum(a[3], b[:, 3])
    empty = (ix1 > ix2) | (iy1 >= iy2)
    inter = np.where(empty, zero, (ix2 - ix1 + one) * (iy2 - iy1 + one)).astype(np.float32)
    if mode == "IOMU":
        union = np.minimum(size_a, size_b)
    elif mode == "IOFU":
        union = np.full_like(size_b, size_a)
    else:
        union = (size_a + size_b - inter).astype(np.float32)
    invalid = (a[2] < a[0]) | (a[3] < a[1]) | (b[:, 2] < b[:, 0]) | (b[:, 3] < b[:, 1]) | (union <= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(invalid, zero, inter / np.where(union > 0, union, one)).astype(np.float32)


def grouped_nms(boxes: np.ndarray, groups: np.ndarray, threshold: np.float32, mode: str) -> np.ndarray:
    """The fork's greedy ApplyNMS run on every group (image) at once, over boxes already in processing order.

    Boxes of different groups never suppress each other. Returns the indices kept, in the given order.
    """
    boxes = np.ascontiguousarray(boxes, dtype=np.float32)
    sizes = box_sizes(np, boxes)

    def overlap(first: np.intp, others: np.ndarray) -> np.ndarray:
        same = groups[others] == groups[first]
        return np.where(same, fork_overlaps(boxes, sizes, int(first), others, mode), np.float32(0))

    # boxes.nms visits boxes by descending score: minus the position visits them in the given order.
    order_scores = -np.arange(boxes.shape[0], dtype=np.float64)
    return nms(boxes, order_scores, threshold, overlap=overlap)


def rank_within(groups: np.ndarray) -> np.ndarray:
    """Each element's position among the elements of its group, for groups already sorted (contiguous)."""
    if groups.size == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    lengths = np.diff(np.r_[starts, groups.size])
    return np.arange(groups.size) - np.repeat(starts, lengths)
