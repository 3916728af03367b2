"""MatchBBox of the SSD fork: bipartite, then optionally per-prediction matching, batched over groups.

A group is one image (or one image and one location class); its ground truth is padded to a common count and
masked. Bipartite matching takes one ground-truth box per round in every group at once.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import numpy.typing as npt

from caffe_core.array_types import Array
from caffe_layers_ssd.bbox import F32, is_cross_boundary, jaccard_overlap

BIPARTITE, PER_PREDICTION = 0, 1
# The fork keeps only overlaps above this as candidate pairs.
MIN_OVERLAP = 1e-6
UNMATCHED, IGNORED = -1, -2


def match_boxes(gt_boxes: npt.ArrayLike, gt_valid: npt.ArrayLike, predictions: npt.ArrayLike, match_type: int,
                overlap_threshold: float, ignore_cross_boundary_bbox: bool) -> tuple[np.ndarray, np.ndarray]:
    """MatchBBox per group: (matched ground-truth column, -1 none or -2 ignored; best overlap), (G, P)."""
    gt_boxes, gt_valid = np.asarray(gt_boxes, F32), np.asarray(gt_valid, bool)
    predictions = np.asarray(predictions, F32)
    groups, num_gt = gt_valid.shape
    num_pred = predictions.shape[1]
    shape = (groups, num_pred)
    # A group without ground truth returns before the fork marks cross-boundary predictions. (gt_valid is
    # (G, T), so its any over axis 1 is an array, not the scalar the stubs also allow for.)
    ignored = (np.broadcast_to(is_cross_boundary(predictions), shape)
               & cast(Array, gt_valid.any(axis=1))[:, None] if ignore_cross_boundary_bbox
               else np.zeros(shape, dtype=bool))
    overlap = jaccard_overlap(predictions[:, :, None, :], gt_boxes[:, None, :, :])
    present = gt_valid[:, None, :] & ~ignored[..., None] & (overlap > F32(MIN_OVERLAP))
    indices = np.where(ignored, IGNORED, UNMATCHED).astype(np.int64)
    overlaps = np.where(present, overlap, F32(0)).max(axis=2, initial=F32(0)).astype(F32)
    # Only predictions overlapping some ground truth take part; the rest keep their initial state.
    # The pair of largest overlap is matched first; argmax's first maximum gives the fork's tie order
    # (lowest prediction, then lowest ground-truth column).
    touched = np.nonzero(present.any(axis=(0, 2)))[0]
    if touched.size == 0:
        return indices, overlaps
    overlap, present = overlap[:, touched], present[:, touched]
    matched = indices[:, touched]
    best_overlaps = overlaps[:, touched]
    pool = gt_valid.copy()
    rows = np.arange(groups)
    for _ in range(num_gt):
        candidate = present & (matched == UNMATCHED)[..., None] & pool[:, None, :]
        found = candidate.reshape(groups, -1).any(axis=1)
        if not found.any():
            break
        best = np.argmax(np.where(candidate, overlap, F32(-1)).reshape(groups, -1), axis=1)
        pred, gt = np.divmod(best, num_gt)
        pred, gt, row = pred[found], gt[found], rows[found]
        matched[row, pred] = gt
        best_overlaps[row, pred] = overlap[row, pred, gt]
        pool[row, gt] = False
    if match_type == PER_PREDICTION:
        candidate = present & (matched == UNMATCHED)[..., None] & (overlap >= F32(overlap_threshold))
        found = candidate.any(axis=2)
        masked = np.where(candidate, overlap, F32(-1))
        matched = np.where(found, np.argmax(masked, axis=2), matched)
        best_overlaps = np.where(found, masked.max(axis=2, initial=F32(-1)), best_overlaps)
    elif match_type != BIPARTITE:
        raise ValueError(f"unknown match_type {match_type}")
    indices[:, touched] = matched
    overlaps[:, touched] = best_overlaps
    return indices, overlaps
