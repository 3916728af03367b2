"""NMS: candidates sorted stably by score, ApplyNMSFast (strict score threshold, top_k, adaptive eta) and
ApplyNMS (tiny boxes dropped) against straightforward loop references, group by group."""

import numpy as np
import pytest

from caffe_layers_ssd.nms import greedy_keep, nms_by_loss, nms_fast, sort_candidates


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
def test_nms_fast_against_reference(fork_nms, nms_threshold, eta, top_k, score_threshold):
    rng = np.random.default_rng(11)
    boxes = random_boxes(rng, 6, 30)
    scores = rng.uniform(0, 1, (6, 30)).astype(np.float32)
    scores[0, :5] = 0.5
    order, kept = nms_fast(boxes, scores, score_threshold, nms_threshold, eta, top_k)
    for group in range(6):
        want = fork_nms.fast(boxes[group].astype(float), scores[group], score_threshold, nms_threshold, eta,
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
def test_nms_by_loss_against_reference(fork_nms, threshold, top_k):
    rng = np.random.default_rng(5)
    boxes = random_boxes(rng, 4, 25)
    boxes[:, ::6, 2:] = boxes[:, ::6, :2] + 1e-3
    losses = rng.uniform(0, 3, (4, 25)).astype(np.float32)
    eligible = rng.uniform(size=(4, 25)) < 0.7
    order, kept = nms_by_loss(boxes, losses, eligible, threshold, top_k)
    for group in range(4):
        want = fork_nms.by_loss(boxes[group].astype(float), losses[group], eligible[group], threshold, top_k)
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
