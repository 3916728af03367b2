"""The SSD fork's per-prior losses and hard-example mining: ComputeConfLoss, MineHardExamples.

Arrays are batched over images: (N, P) per prior, with the match of each prior (-1 none, -2 ignored).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from caffe_layers_ssd.bbox import F32
from caffe_layers_ssd.nms import nms_by_loss

SOFTMAX, LOGISTIC = 0, 1
L2, SMOOTH_L1 = 0, 1
NONE, MAX_NEGATIVE, HARD_EXAMPLE = 0, 1, 2
FLT_MIN = np.finfo(F32).tiny


def softmax(logits: npt.ArrayLike) -> np.ndarray:
    """Softmax over the last axis in float32, after subtracting the maximum."""
    logits = np.asarray(logits, F32)
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return (shifted / shifted.sum(axis=-1, keepdims=True, dtype=F32)).astype(F32)


def softmax_losses(logits: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """-log(max(p_label, FLT_MIN)) per row of logits (..., C), and the probabilities."""
    prob = softmax(logits)
    picked = np.take_along_axis(prob, np.asarray(labels, np.int64)[..., None], axis=-1)[..., 0]
    return (-np.log(np.maximum(picked, FLT_MIN))).astype(F32), prob


def logistic_losses(logits: npt.ArrayLike, targets: npt.ArrayLike) -> np.ndarray:
    """Sigmoid cross-entropy per element, in the fork's overflow-safe form."""
    x, t = np.asarray(logits, F32), np.asarray(targets, F32)
    positive = (x >= 0).astype(F32)
    return (-(x * (t - positive) - np.log(F32(1) + np.exp(x - F32(2) * x * positive)))).astype(F32)


def sigmoid(x: npt.ArrayLike) -> np.ndarray:
    """1 / (1 + exp(-x)) in float32."""
    x = np.asarray(x, F32)
    with np.errstate(over="ignore"):
        return (F32(1) / (F32(1) + np.exp(-x))).astype(F32)


def conf_losses(conf: npt.ArrayLike, labels: npt.ArrayLike, loss_type: int) -> np.ndarray:
    """ComputeConfLoss: each prior's confidence loss (N, P) against its label (its class, or background)."""
    conf = np.asarray(conf, F32)
    if loss_type == SOFTMAX:
        return softmax_losses(conf, labels)[0]
    targets = np.arange(conf.shape[-1])[None, None, :] == np.asarray(labels)[..., None]
    return logistic_losses(conf, targets).sum(axis=-1, dtype=F32)


def loc_errors(diff: npt.ArrayLike, loss_type: int) -> np.ndarray:
    """Element-wise localisation loss of pred - target: smooth L1 (|d| < 1: d^2 / 2, else |d| - 1/2) or L2."""
    diff = np.asarray(diff, F32)
    half_square = F32(0.5) * diff * diff
    if loss_type == L2:
        return half_square
    magnitude = np.abs(diff)
    return np.where(magnitude < 1, half_square, magnitude - F32(0.5)).astype(F32)


def loc_gradient(diff: npt.ArrayLike, loss_type: int) -> np.ndarray:
    """d loc_errors / d pred: d for L2; d inside (-1, 1), else its sign, for smooth L1."""
    diff = np.asarray(diff, F32)
    if loss_type == L2:
        return diff
    return np.where(np.abs(diff) < 1, diff, np.sign(diff)).astype(F32)


def select_examples(loss: npt.ArrayLike, eligible: npt.ArrayLike, num_select: npt.ArrayLike,
                    boxes: npt.ArrayLike | None = None, nms_threshold: float = 0.0,
                    top_k: int = -1) -> np.ndarray:
    """Each image's num_select eligible priors of largest loss (N, P mask); with boxes, after NMS."""
    loss, eligible = np.asarray(loss, F32), np.asarray(eligible, bool)
    num_select = np.asarray(num_select, np.int64)
    if boxes is not None:
        order, kept = nms_by_loss(boxes, loss, eligible, nms_threshold, top_k, limit=num_select)
    else:
        # Without NMS the fork sorts with an unstable sort; ties go to the lower prior here.
        order = np.argsort(np.where(eligible, -loss, np.inf), axis=1, kind="stable")
        kept = np.take_along_axis(eligible, order, axis=1)
    taken = kept & (np.cumsum(kept, axis=1) <= num_select[:, None])
    selected = np.zeros(eligible.shape, dtype=bool)
    rows = np.broadcast_to(np.arange(eligible.shape[0])[:, None], order.shape)
    selected[rows[taken], order[taken]] = True
    return selected


def eligible_for_mining(mining_type: int, match: npt.ArrayLike, overlaps: npt.ArrayLike,
                        neg_overlap: float) -> np.ndarray:
    """IsEligibleMining: MAX_NEGATIVE takes unmatched priors below neg_overlap; HARD_EXAMPLE takes all."""
    match = np.asarray(match)
    if mining_type == MAX_NEGATIVE:
        return (match == -1) & (np.asarray(overlaps, F32) < F32(neg_overlap))
    if mining_type == HARD_EXAMPLE:
        return np.ones(match.shape, dtype=bool)
    return np.zeros(match.shape, dtype=bool)


def selection_size(mining_type: int, match: npt.ArrayLike, eligible: npt.ArrayLike, neg_pos_ratio: float,
                   sample_size: int) -> np.ndarray:
    """How many examples each image picks: int(positives * neg_pos_ratio) negatives, or sample_size."""
    available = np.asarray(eligible).sum(axis=1)
    if mining_type == MAX_NEGATIVE:
        positives = (np.asarray(match) > -1).sum(axis=1)
        wanted = (positives.astype(F32) * F32(neg_pos_ratio)).astype(np.int64)
    else:
        wanted = np.full(available.shape, sample_size, dtype=np.int64)
    return np.minimum(wanted, available)
