"""What eric612's two YOLO detection outputs share: the logistic, the candidates' centre-form boxes, the
class-agnostic greedy NMS over all images together, and the (1, 1, K, 7) rows.

Arithmetic follows the fork's types: its `exp` calls take a float and resolve to C's double `exp`, so the
logistic and the anchor sizes are evaluated in double and rounded once to float; everything else (cell
offsets, scores, overlaps) is float32 arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32
ROW = 7


def sigmoid(values: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) in double, rounded to float32 (the fork's `sigmoid` on a float)."""
    return (1.0 / (1.0 + np.exp(-np.asarray(values, dtype=np.float64)))).astype(F32)


def anchor_size(logits: np.ndarray, anchor: np.ndarray, extent: float) -> np.ndarray:
    """exp(t) * anchor / extent in double, rounded to float32 (the fork's box width and height)."""
    value = np.exp(np.asarray(logits, dtype=np.float64)) * np.asarray(anchor, dtype=F32).astype(np.float64)
    return (value / extent).astype(F32)


@dataclass
class Candidates:
    """Detections before NMS, in the fork's loop order: centre x, y, size w, h, label and confidence."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    h: np.ndarray
    label: np.ndarray
    confidence: np.ndarray

    @classmethod
    def concatenate(cls, parts: list[Candidates]) -> Candidates:
        """The parts one after the other."""
        if not parts:
            empty = np.zeros(0, dtype=F32)
            return cls(empty, empty, empty, empty, np.zeros(0, dtype=np.int64), empty)
        return cls(*(np.concatenate([getattr(p, name) for p in parts])
                     for name in ("x", "y", "w", "h", "label", "confidence")))

    def take(self, index: np.ndarray) -> Candidates:
        """The candidates at `index`, in its order."""
        return Candidates(self.x[index], self.y[index], self.w[index], self.h[index], self.label[index],
                          self.confidence[index])


def centre_iou(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> np.ndarray:
    """The fork's box_iou of (x, y, w, h) boxes a and b, broadcast, in float32 (NaN for two empty boxes)."""
    (xa, ya, wa, ha), (xb, yb, wb, hb) = a, b
    half_wa, half_wb, half_ha, half_hb = wa / F32(2), wb / F32(2), ha / F32(2), hb / F32(2)
    overlap_w = np.minimum(xa + half_wa, xb + half_wb) - np.maximum(xa - half_wa, xb - half_wb)
    overlap_h = np.minimum(ya + half_ha, yb + half_hb) - np.maximum(ya - half_ha, yb - half_hb)
    inter = np.where((overlap_w < 0) | (overlap_h < 0), F32(0), overlap_w * overlap_h)
    union = wa * ha + wb * hb - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(inter / union, dtype=F32)


def fork_nms(boxes: Candidates, source: np.ndarray, threshold: float) -> np.ndarray:
    """Indices kept by the fork's ApplyNms on candidates sorted by confidence: each candidate not yet
    suppressed suppresses every later one whose IoU with it is >= threshold.

    `source` names the (image, cell, anchor) each candidate comes from: candidates of one source share one
    box, so a repeat is suppressed whenever that box's IoU with itself reaches the threshold (whatever keeps
    or suppresses the source's first candidate suppresses it too); only the others go through the loop.
    """
    count = boxes.x.size
    thr = F32(threshold)
    box = (boxes.x, boxes.y, boxes.w, boxes.h)
    first = np.zeros(count, dtype=bool)
    _, first_index = np.unique(source, return_index=True)
    first[first_index] = True
    candidates = np.flatnonzero(first | ~(centre_iou(box, box) >= thr))
    alive = np.ones(candidates.size, dtype=bool)
    position = 0
    while position < candidates.size:
        later = candidates[position + 1:]
        if later.size:
            current = tuple(part[candidates[position]] for part in box)
            alive[position + 1:] &= ~(centre_iou(current, tuple(part[later] for part in box)) >= thr)
        following = np.flatnonzero(alive[position + 1:])
        if following.size == 0:
            break
        position += 1 + int(following[0])
    return candidates[alive]


def detection_output(candidates: Candidates, source: np.ndarray, nms_threshold: float,
                     num: int) -> np.ndarray:
    """The fork's output rows: candidates by confidence (ties in loop order: the fork's std::sort leaves
    them open), greedy NMS, one row per kept box; no box kept: `empty_rows(num)`."""
    order = np.argsort(-candidates.confidence, kind="stable")
    ordered = candidates.take(order)
    kept = fork_nms(ordered, source[order], nms_threshold)
    return detection_rows(ordered.take(kept)) if kept.size else empty_rows(num)


def detection_rows(boxes: Candidates) -> np.ndarray:
    """Rows [0, label + 1, confidence, x - w/2, y - h/2, x + w/2, y + h/2] (image id 0, boxes unclipped)."""
    rows = np.zeros((boxes.x.size, ROW), dtype=F32)
    rows[:, 1] = boxes.label + 1
    rows[:, 2] = boxes.confidence
    # The fork computes the corners in double (`w / 2.`) and stores them as float.
    x, y = boxes.x.astype(np.float64), boxes.y.astype(np.float64)
    w, h = boxes.w.astype(np.float64) / 2.0, boxes.h.astype(np.float64) / 2.0
    rows[:, 3], rows[:, 4], rows[:, 5], rows[:, 6] = x - w, y - h, x + w, y + h
    return rows


def empty_rows(num: int) -> np.ndarray:
    """The fork's output when nothing is kept: one row of -1 per image, its first value the image index."""
    rows = np.full((num, ROW), -1, dtype=F32)
    rows[:, 0] = np.arange(num)
    return rows
