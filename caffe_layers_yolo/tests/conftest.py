"""caffe_layers_yolo's own test fixtures: eric612's two detection outputs written as the fork's loops (the
reference the vectorised layers are checked against), and `forward_once`. CPU mode, seed 1701,
`make_layer`, `blob_of`, `gaussian`, `golden_case` and `gpu_matches_cpu` come from the core's
pytest plugin."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from caffe_core.blob import Blob

F = np.float32


def logistic(v: float) -> F:
    """The fork's sigmoid on a float: evaluated in double, stored as float."""
    return F(1.0 / (1.0 + math.exp(-float(v))))


class ForkYolo:
    """Yolov3DetectionOutput / YoloDetectionOutput forward as the fork's nested loops, one float at a time."""

    @staticmethod
    def iou(a, b) -> F:
        """box_iou on centre-form (x, y, w, h) floats."""
        def overlap(x1, w1, x2, w2):
            left = max(F(x1 - w1 / F(2)), F(x2 - w2 / F(2)))
            right = min(F(x1 + w1 / F(2)), F(x2 + w2 / F(2)))
            return F(right - left)
        w, h = overlap(a[0], a[2], b[0], b[2]), overlap(a[1], a[3], b[1], b[3])
        inter = F(0) if (w < 0 or h < 0) else F(w * h)
        union = F(F(F(a[2] * a[3]) + F(b[2] * b[3])) - inter)
        with np.errstate(divide="ignore", invalid="ignore"):
            return F(inter / union)

    @classmethod
    def rows(cls, predictions, nms_threshold, num):
        """std::sort by confidence (stable here), ApplyNms, output rows (or the -1 rows)."""
        predictions = sorted(predictions, key=lambda p: -p[5])
        suppressed = set()
        for i in range(len(predictions)):
            if i in suppressed:
                continue
            for j in range(i + 1, len(predictions)):
                overlap = cls.iou(predictions[i][:4], predictions[j][:4])
                if j not in suppressed and overlap >= F(nms_threshold):
                    suppressed.add(j)
        kept = [p for i, p in enumerate(predictions) if i not in suppressed]
        if not kept:
            return np.array([[i] + [-1] * 6 for i in range(num)], dtype=F)
        return np.array([[0, label + 1, conf, x - w / 2.0, y - h / 2.0, x + w / 2.0, y + h / 2.0]
                         for x, y, w, h, label, conf in kept], dtype=F)

    @classmethod
    def v3(cls, bottoms, num_classes, biases, mask, anchors_scale, num_box=3, confidence_threshold=0.01,
           nms_threshold=0.45):
        """Yolov3DetectionOutput::Forward_cpu (non-gaussian)."""
        length = 5 + num_classes
        per_head = len(mask) // len(bottoms)
        predictions = []
        for t, data in enumerate(bottoms):
            num, _, height, width = data.shape
            nw, nh = width * anchors_scale[t], height * anchors_scale[t]
            for b in range(num):
                for s in range(height * width):
                    row, col = divmod(s, width)
                    for n in range(num_box):
                        v = data[b, n * length:(n + 1) * length].reshape(length, -1)[:, s]
                        obj = logistic(v[4])
                        m = mask[n + t * per_head]
                        x = F(F(col + logistic(v[0])) / F(width))
                        y = F(F(row + logistic(v[1])) / F(height))
                        w = F(math.exp(float(v[2])) * float(F(biases[2 * m])) / nw)
                        h = F(math.exp(float(v[3])) * float(F(biases[2 * m + 1])) / nh)
                        for c in range(num_classes):
                            score = F(logistic(v[5 + c]) * obj)
                            if score > F(confidence_threshold):
                                predictions.append((x, y, w, h, c, score))
        return cls.rows(predictions, nms_threshold, bottoms[0].shape[0])

    @classmethod
    def v2(cls, bottoms, num_classes, biases, num_box=5, confidence_threshold=0.01, nms_threshold=0.45):
        """YoloDetectionOutput::Forward_cpu: bottom 0 then bottom 1."""
        length = 5 + num_classes
        predictions = []
        for data in bottoms[:2]:
            num, _, side, _ = data.shape
            for b in range(num):
                for j in range(side):
                    for i in range(side):
                        for n in range(num_box):
                            v = data[b, n * length:(n + 1) * length, j, i]
                            x = F(F(i + logistic(v[0])) / F(side))
                            y = F(F(j + logistic(v[1])) / F(side))
                            w = F(math.exp(float(v[2])) * float(F(biases[2 * n])) / side)
                            h = F(math.exp(float(v[3])) * float(F(biases[2 * n + 1])) / side)
                            logits = v[5:]
                            large = max(logits)
                            exps = [F(math.exp(float(F(z - large)))) for z in logits]
                            total = F(0)
                            for e in exps:
                                total = F(total + e)
                            probs = [F(e / total) for e in exps]
                            best = 0
                            for c in range(num_classes):
                                if probs[c] > probs[best]:
                                    best = c
                            conf = F(logistic(v[4]) * probs[best])
                            if conf >= F(confidence_threshold):
                                predictions.append((x, y, w, h, best, conf))
        return cls.rows(predictions, nms_threshold, bottoms[0].shape[0])


@pytest.fixture
def fork_yolo() -> type[ForkYolo]:
    """The fork's detection outputs as loops: `fork_yolo.v3(bottoms, ...)`, `fork_yolo.v2(bottoms, ...)`."""
    return ForkYolo


@pytest.fixture
def forward_once(make_layer, blob_of) -> Callable[[str, list[np.ndarray]], Blob]:
    """`forward_once(text, arrays)`: the layer of `text` set up on blobs of `arrays`, run forward; its top."""
    def forward(text: str, arrays: list[np.ndarray]) -> Blob:
        layer = make_layer(text)
        bottom, top = [blob_of(a) for a in arrays], [Blob()]
        layer.setup(bottom, top)
        layer.forward(bottom, top)
        return top[0]

    return forward
