"""The proposal pipeline against a straightforward per-anchor reference of py-faster-rcnn's algorithm."""

import math

import numpy as np
import pytest

from caffe_layers_rcnn.anchors import generate_anchors
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings, bottom_problem, propose


def iou(a, b):
    width = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + 1)
    height = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + 1)
    inter = width * height
    area = (a[2] - a[0] + 1) * (a[3] - a[1] + 1) + (b[2] - b[0] + 1) * (b[3] - b[1] + 1)
    return inter / (area - inter)


def reference(scores_map, deltas_map, im_info, anchors, s):
    """Every anchor at every cell decoded, clipped and filtered one by one; then sort, greedy NMS, cut."""
    num_anchors = len(anchors)
    _, _, height, width = scores_map.shape
    im_h, im_w, im_scale = (float(v) for v in im_info.ravel()[:3])
    candidates = []
    for h in range(height):
        for w in range(width):
            for a in range(num_anchors):
                x1, y1, x2, y2 = anchors[a] + [w * s.feat_stride, h * s.feat_stride] * 2
                dx, dy, dw, dh = (float(v) for v in deltas_map[0, 4 * a: 4 * a + 4, h, w])
                bw, bh = x2 - x1 + 1, y2 - y1 + 1
                cx, cy = x1 + 0.5 * bw + dx * bw, y1 + 0.5 * bh + dy * bh
                pw, ph = math.exp(dw) * bw, math.exp(dh) * bh
                box = [cx - 0.5 * pw, cy - 0.5 * ph, cx + 0.5 * pw, cy + 0.5 * ph]
                box = [min(max(v, 0), (im_w if k % 2 == 0 else im_h) - 1) for k, v in enumerate(box)]
                if min(box[2] - box[0] + 1, box[3] - box[1] + 1) >= s.min_size * im_scale:
                    candidates.append((float(scores_map[0, num_anchors + a, h, w]), box))
    candidates.sort(key=lambda c: -c[0])
    if s.pre_nms_topn:
        candidates = candidates[:s.pre_nms_topn]
    kept = []
    for score, box in candidates:
        if all(iou(box, other) <= s.nms_thresh for _, other in kept):
            kept.append((score, box))
    if s.post_nms_topn:
        kept = kept[:s.post_nms_topn]
    return np.array([[0, *box] for _, box in kept]).reshape(-1, 5), np.array([[c] for c, _ in kept])


@pytest.mark.parametrize(("settings", "scales", "im_info"), [
    (ProposalSettings(), (8, 16, 32), [150, 170, 1.0]),
    (ProposalSettings(16, 100, 20, 0.5, 16), (8, 16, 32), [150, 170, 1.6]),
    (ProposalSettings(8, 0, 0, 0.3, 4), (2, 4), [90, 70, 0.5]),
])
def test_matches_the_reference(settings, scales, im_info):
    rng = np.random.default_rng(sum(scales))
    anchors = generate_anchors(16, [0.5, 1, 2], scales)
    height, width = 7, 9
    scores = rng.random((1, 2 * len(anchors), height, width)).astype(np.float32)
    deltas = rng.normal(0, 0.3, (1, 4 * len(anchors), height, width)).astype(np.float32)
    info = np.array([im_info], dtype=np.float32)
    rois, kept_scores = propose(scores, deltas, info, anchors, settings)
    want_rois, want_scores = reference(scores, deltas, info, anchors, settings)
    assert rois.dtype == kept_scores.dtype == np.float32
    assert rois.shape == want_rois.shape and rois.shape[0] > 3
    np.testing.assert_allclose(rois, want_rois, rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(kept_scores, want_scores.astype(np.float32))


def test_nothing_survives_a_huge_min_size():
    anchors = generate_anchors()
    rois, scores = propose(np.ones((1, 18, 2, 2), np.float32), np.zeros((1, 36, 2, 2), np.float32),
                           np.array([[32, 32, 100]], np.float32), anchors, ProposalSettings())
    assert rois.shape == (0, 5) and scores.shape == (0, 1)


@pytest.mark.parametrize(("shapes", "words"), [
    (((1, 18, 3, 3), (1, 36, 3), 3), "4 axes"),
    (((2, 18, 3, 3), (2, 36, 3, 3), 3), "single item batches"),
    (((2, 18, 3, 3), (1, 36, 3, 3), 3), "same num"),
    (((1, 9, 3, 3), (1, 36, 3, 3), 3), "2 x 9 anchors = 18 channels"),
    (((1, 18, 3, 3), (1, 32, 3, 3), 3), "4 x 9 channels"),
    (((1, 18, 3, 3), (1, 36, 3, 4), 3), "height and width"),
    (((1, 18, 3, 3), (1, 36, 3, 3), 2), "im_info"),
])
def test_bottom_problems(shapes, words):
    assert words in bottom_problem(*shapes, 9)
    assert bottom_problem((1, 18, 3, 3), (1, 36, 3, 3), 3, 9) is None
