"""caffe_layers_ssd's own test fixture: the fork's NMS written as its loops (the reference the pack's NMS and
DetectionOutput are checked against); CPU mode, seed 1701, `make_layer`, `blob_of`, `gaussian`,
`golden_case` and `gpu_matches_cpu` come from the core's pytest plugin."""

from __future__ import annotations

from collections.abc import Sequence

import pytest


class ForkNMS:
    """The fork's box overlap and NMS (bbox_util.cpp) as straightforward loops, in float64."""

    @staticmethod
    def size(box: Sequence[float]) -> float:
        """The fork's normalised BBoxSize: 0 for an inverted box."""
        return 0.0 if box[2] < box[0] or box[3] < box[1] else (box[2] - box[0]) * (box[3] - box[1])

    @classmethod
    def iou(cls, a: Sequence[float], b: Sequence[float]) -> float:
        """The fork's normalised JaccardOverlap."""
        if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
            return 0.0
        w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
        if w <= 0 or h <= 0:
            return 0.0
        return w * h / (cls.size(a) + cls.size(b) - w * h)

    @classmethod
    def fast(cls, boxes, scores, score_threshold, nms_threshold, eta, top_k) -> list[int]:
        """ApplyNMSFast: the kept indices, best score first."""
        pairs = sorted([(s, i) for i, s in enumerate(scores) if s > score_threshold], key=lambda p: -p[0])
        if top_k > -1:
            pairs = pairs[:top_k]
        kept, threshold = [], nms_threshold
        for _, i in pairs:
            keep = all(cls.iou(boxes[i], boxes[k]) <= threshold for k in kept)
            if keep:
                kept.append(i)
                if eta < 1 and threshold > 0.5:
                    threshold *= eta
        return kept

    @classmethod
    def by_loss(cls, boxes, losses, eligible, threshold, top_k) -> list[int]:
        """ApplyNMS on the eligible candidates: the kept indices, highest loss first."""
        remaining = sorted([i for i in range(len(losses)) if eligible[i]], key=lambda i: -losses[i])
        if top_k > -1:
            remaining = remaining[:top_k]
        kept = []
        while remaining:
            best = remaining.pop(0)
            if cls.size(boxes[best]) < 1e-5:
                continue
            kept.append(best)
            if top_k > -1 and len(kept) >= top_k:
                break
            remaining = [i for i in remaining
                         if cls.size(boxes[i]) >= 1e-5 and cls.iou(boxes[best], boxes[i]) <= threshold]
        return kept


@pytest.fixture
def fork_nms() -> type[ForkNMS]:
    """The fork's NMS as loops: `fork_nms.fast(...)` (ApplyNMSFast), `fork_nms.by_loss(...)` (ApplyNMS),
    `fork_nms.iou(a, b)`."""
    return ForkNMS
