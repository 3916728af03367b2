"""Non-maximum suppression of the SSD fork (ApplyNMSFast and ApplyNMS), batched over independent groups.

A group is one (image, class) of DetectionOutput or one image of MultiBoxLoss's mining. Every group's
candidates are sorted once; the only Python loop walks the candidates' sequential keep decisions, each step
deciding the k-th candidate of every group at once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from caffe_layers_ssd.bbox import F32, box_size, jaccard_overlap

SMALL_BOX = 1e-5


def sort_candidates(scores: npt.ArrayLike, eligible: npt.ArrayLike,
                    top_k: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Each group's eligible indices by score, descending and stable, cut to top_k: (order, valid)."""
    scores, eligible = np.asarray(scores, F32), np.asarray(eligible, bool)
    groups = scores.shape[0]
    key = np.where(eligible, -scores, np.inf)
    order = np.argsort(key, axis=1, kind="stable")
    counts = eligible.sum(axis=1)
    width = int(counts.max()) if counts.size else 0
    if top_k > -1:
        width = min(width, top_k)
    order = order[:, :width]
    valid = np.arange(width)[None, :] < counts[:, None]
    return order.reshape(groups, width), valid.reshape(groups, width)


def greedy_keep(boxes: npt.ArrayLike, valid: npt.ArrayLike, threshold: float, eta: float = 1.0,
                min_size: float | None = None, limit: npt.ArrayLike | None = None) -> np.ndarray:
    """Keeps, in candidate order, each box overlapping every box kept before it by at most the threshold."""
    boxes, valid = np.asarray(boxes, F32), np.asarray(valid, bool)
    groups, width = valid.shape
    sizes = box_size(boxes)
    allowed = valid if min_size is None else valid & (sizes >= F32(min_size))
    limit = np.full(groups, width) if limit is None else np.broadcast_to(np.asarray(limit), (groups,))
    kept = np.zeros((groups, width), dtype=bool)
    if kept.size == 0:
        return kept
    kept_boxes = np.zeros((groups, width, 4), dtype=F32)
    kept_sizes = np.zeros((groups, width), dtype=F32)
    count = np.zeros(groups, dtype=np.int64)
    thresholds = np.full(groups, F32(threshold), dtype=F32)
    rows = np.arange(groups)
    last_allowed = np.where(allowed.any(axis=1), width - 1 - np.argmax(allowed[:, ::-1], axis=1), -1)
    for k in range(width):
        if ((count >= limit) | (last_allowed < k)).all():
            break
        active = allowed[:, k] & (count < limit)
        if not active.any():
            continue
        used = int(count.max())
        if used:
            overlap = jaccard_overlap(boxes[:, k, None, :], kept_boxes[:, :used], sizes[:, k, None],
                                      kept_sizes[:, :used])
            slot_used = np.arange(used)[None, :] < count[:, None]
            active &= ((overlap <= thresholds[:, None]) | ~slot_used).all(axis=1)
        keep = rows[active]
        kept_boxes[keep, count[keep]] = boxes[keep, k]
        kept_sizes[keep, count[keep]] = sizes[keep, k]
        count[keep] += 1
        kept[keep, k] = True
        if eta < 1:
            # ApplyNMSFast's adaptive NMS: a group's threshold shrinks after each keep while above 0.5.
            shrink = active & (thresholds > F32(0.5))
            thresholds[shrink] = thresholds[shrink] * F32(eta)
    return kept


def nms_fast(boxes: npt.ArrayLike, scores: npt.ArrayLike, score_threshold: float, nms_threshold: float,
             eta: float, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """ApplyNMSFast per group on boxes (G, P, 4), scores (G, P): (candidate order, kept mask)."""
    scores = np.asarray(scores, F32)
    order, valid = sort_candidates(scores, scores > F32(score_threshold), top_k)
    candidates = np.take_along_axis(np.asarray(boxes, F32), order[..., None], axis=1)
    return order, greedy_keep(candidates, valid, nms_threshold, eta)


def nms_by_loss(boxes: npt.ArrayLike, losses: npt.ArrayLike, eligible: npt.ArrayLike, threshold: float,
                top_k: int, limit: npt.ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ApplyNMS per group on the eligible candidates: (candidate order, kept mask), at most `limit` kept."""
    order, valid = sort_candidates(losses, eligible, top_k)
    candidates = np.take_along_axis(np.asarray(boxes, F32), order[..., None], axis=1)
    return order, greedy_keep(candidates, valid, threshold, min_size=SMALL_BOX, limit=limit)
