"""NMS: candidates sorted stably by score, ApplyNMSFast (strict score threshold, top_k, adaptive eta) and
ApplyNMS (tiny boxes dropped) against straightforward loop references, group by group."""

import numpy as np
import pytest

from caffe_layers_ssd.nms import greedy_keep, nms_by_loss, nms_fast, sort_candidates


def iou(a, b):
    """The fork's normalised JaccardOverlap, in float64."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    w, h = min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0

    def size(box):
        return 0.0 if box[2] < box[0] or box[3] < box[1] else (box[2] - box[0]) * (box[3] - box[1])

    return w * h / (size(a) + size(b) - w * h)


def reference_fast(boxes, scores, score_threshold, nms_threshold, eta, top_k):
    """ApplyNMSFast, written as the fork's loops."""
    pairs = sorted([(s, i) for i, s in enumerate(scores) if s > score_threshold], key=lambda p: -p[0])
    if top_k > -1:
        pairs = pairs[:top_k]
    kept, threshold = [], nms_threshold
    for _, i in pairs:
        keep = all(iou(boxes[i], boxes[k]) <= threshold for k in kept)
        if keep:
            kept.append(i)
            if eta < 1 and threshold > 0.5:
                threshold *= eta
    return kept


def reference_by_loss(boxes, losses, eligible, threshold, top_k):
    """ApplyNMS on the eligible candidates, written as the fork's loops."""
    def size(box):
        return 0.0 if box[2] < box[0] or box[3] < box[1] else (box[2] - box[0]) * (box[3] - box[1])

    remaining = sorted([i for i in range(len(losses)) if eligible[i]], key=lambda i: -losses[i])
    if top_k > -1:
        remaining = remaining[:top_k]
    kept = []
    while remaining:
        best = remaining.pop(0)
        if size(boxes[best]) < 1e-5:
            continue
        kept.append(best)
        if top_k > -1 and len(kept) >= top_k:
            break
        remaining = [i for i in remaining
                     if size(boxes[i]) >= 1e-5 and iou(boxes[best], boxes[i]) <= threshold]
    return kept


def random_boxes(rng, groups, count):
    lo = rng.uniform(0, 0.7, (groups, count, 2))
    return np.concatenate([lo, lo + rng.uniform(0.05, 0.3, (groups, count, 2))], axis=2).astype(np.float32)


def kept_indices(order, kept, group):
    return order[group][kept[group]].tolist()


def test_sort_candidates_is_stable_and_cut():
    scores = np.array([[0.5, 0.9, 0.5, 0.1], [0.2, 0.2, 0.2, 0.2]], np.float32)
    order, valid = sort_candidates(scores, scores > 0.15, top_k=3)
    assert order.tolist() == [[1, 0, 2], [0, 1, 2]]
    assert valid.tolist() == [[True, True, True], [True, True, True]]
    order, valid = sort_candidates(scores, scores > 0.3)
    assert order.shape == (2, 3) and valid.tolist() == [[True, True, True], [False, False, False]]


@pytest.mark.parametrize(("nms_threshold", "eta", "top_k", "score_threshold"), [
    (0.45, 1.0, -1, 0.3), (0.3, 1.0, 5, -1.0), (0.8, 0.9, -1, 0.0), (0.6, 0.7, 8, 0.2), (0.0, 1.0, -1, 0.5),
])
def test_nms_fast_against_reference(nms_threshold, eta, top_k, score_threshold):
    rng = np.random.default_rng(11)
    boxes = random_boxes(rng, 6, 30)
    scores = rng.uniform(0, 1, (6, 30)).astype(np.float32)
    scores[0, :5] = 0.5
    order, kept = nms_fast(boxes, scores, score_threshold, nms_threshold, eta, top_k)
    for group in range(6):
        want = reference_fast(boxes[group].astype(float), scores[group], score_threshold, nms_threshold, eta,
                              top_k)
        assert kept_indices(order, kept, group) == want


def test_score_threshold_is_strict():
    boxes = random_boxes(np.random.default_rng(0), 1, 3)
    scores = np.array([[0.3, 0.31, 0.2]], np.float32)
    order, kept = nms_fast(boxes, scores, np.float32(0.3), 1.0, 1.0, -1)
    assert kept_indices(order, kept, 0) == [1]


def test_overlap_equal_to_the_threshold_is_kept():
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 0.5]]], np.float32)
    scores = np.array([[0.9, 0.8]], np.float32)
    order, kept = nms_fast(boxes, scores, 0.0, 0.5, 1.0, -1)
    assert kept_indices(order, kept, 0) == [0, 1]
    order, kept = nms_fast(boxes, scores, 0.0, 0.49, 1.0, -1)
    assert kept_indices(order, kept, 0) == [0]


def test_eta_shrinks_the_threshold_after_each_keep():
    """Thresholds 0.8 -> 0.4 after the first keep: the third box (IoU 0.5 with the first) is then refused."""
    boxes = np.array([[[0, 0, 1, 1], [2, 2, 3, 3], [0, 0, 1, 0.5]]], np.float32)
    scores = np.array([[0.9, 0.8, 0.7]], np.float32)
    order, kept = nms_fast(boxes, scores, 0.0, 0.8, 0.5, -1)
    assert kept_indices(order, kept, 0) == [0, 1]
    order, kept = nms_fast(boxes, scores, 0.0, 0.8, 1.0, -1)
    assert kept_indices(order, kept, 0) == [0, 1, 2]


@pytest.mark.parametrize(("threshold", "top_k"), [(0.5, -1), (0.3, 7), (0.7, 0), (0.45, 3)])
def test_nms_by_loss_against_reference(threshold, top_k):
    rng = np.random.default_rng(5)
    boxes = random_boxes(rng, 4, 25)
    boxes[:, ::6, 2:] = boxes[:, ::6, :2] + 1e-3
    losses = rng.uniform(0, 3, (4, 25)).astype(np.float32)
    eligible = rng.uniform(size=(4, 25)) < 0.7
    order, kept = nms_by_loss(boxes, losses, eligible, threshold, top_k)
    for group in range(4):
        want = reference_by_loss(boxes[group].astype(float), losses[group], eligible[group], threshold, top_k)
        assert kept_indices(order, kept, group) == want


def test_limit_stops_each_group():
    rng = np.random.default_rng(8)
    boxes = random_boxes(rng, 3, 20)
    valid = np.ones((3, 20), bool)
    full = greedy_keep(boxes, valid, 0.3)
    limited = greedy_keep(boxes, valid, 0.3, limit=np.array([1, 2, 100]))
    for group, limit in enumerate([1, 2, 100]):
        first = np.nonzero(full[group])[0][:limit]
        assert np.nonzero(limited[group])[0].tolist() == first.tolist()


def test_empty_inputs():
    order, kept = nms_fast(np.zeros((0, 5, 4)), np.zeros((0, 5)), 0.0, 0.5, 1.0, -1)
    assert order.shape == (0, 0) and kept.shape == (0, 0)
    order, kept = nms_fast(np.zeros((2, 5, 4)), np.zeros((2, 5)), 0.5, 0.5, 1.0, -1)
    assert kept.shape == (2, 0)
