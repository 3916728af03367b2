"""MatchBBox: bipartite rounds (largest overlap first, ties to the lowest prediction then ground truth), the
per-prediction pass, cross-boundary predictions and groups without ground truth, against the fork's loops."""

import numpy as np
import pytest

from caffe_layers_ssd.bbox import jaccard_overlap
from caffe_layers_ssd.matching import BIPARTITE, PER_PREDICTION, match_boxes


def reference_match(gt, preds, match_type, threshold, ignore_cross_boundary):
    """MatchBBox as the fork's loops (label -1: all ground truth)."""
    num_pred = len(preds)
    indices, best = [-1] * num_pred, [0.0] * num_pred
    if len(gt) == 0:
        return indices, best
    overlaps = {}
    for i in range(num_pred):
        if ignore_cross_boundary and ((preds[i] < 0) | (preds[i] > 1)).any():
            indices[i] = -2
            continue
        for j in range(len(gt)):
            overlap = float(jaccard_overlap(preds[i], gt[j]))
            if overlap > 1e-6:
                best[i] = max(best[i], overlap)
                overlaps.setdefault(i, {})[j] = overlap
    pool = list(range(len(gt)))
    while pool:
        max_idx, max_gt, max_overlap = -1, -1, -1.0
        for i in sorted(overlaps):
            if indices[i] != -1:
                continue
            for j in pool:
                if j in overlaps[i] and overlaps[i][j] > max_overlap:
                    max_idx, max_gt, max_overlap = i, j, overlaps[i][j]
        if max_idx == -1:
            break
        indices[max_idx], best[max_idx] = max_gt, max_overlap
        pool.remove(max_gt)
    if match_type == PER_PREDICTION:
        for i in sorted(overlaps):
            if indices[i] != -1:
                continue
            max_gt, max_overlap = -1, -1.0
            for j in range(len(gt)):
                if j in overlaps[i] and overlaps[i][j] >= threshold and overlaps[i][j] > max_overlap:
                    max_gt, max_overlap = j, overlaps[i][j]
            if max_gt != -1:
                indices[i], best[i] = max_gt, max_overlap
    return indices, best


def boxes(rng, count, spread=0.8):
    lo = rng.uniform(-0.1, spread, (count, 2))
    return np.concatenate([lo, lo + rng.uniform(0.05, 0.4, (count, 2))], axis=1).astype(np.float32)


@pytest.mark.parametrize("match_type", [BIPARTITE, PER_PREDICTION])
@pytest.mark.parametrize("ignore", [False, True])
def test_against_reference(match_type, ignore):
    rng = np.random.default_rng(21)
    counts = [3, 0, 5, 1]
    gt = np.zeros((4, 5, 4), np.float32)
    valid = np.zeros((4, 5), bool)
    for g, count in enumerate(counts):
        gt[g, :count] = boxes(rng, count)
        valid[g, :count] = True
    preds = boxes(rng, 40)
    indices, overlaps = match_boxes(gt, valid, preds[None], match_type, 0.3, ignore)
    for g, count in enumerate(counts):
        want_indices, want_overlaps = reference_match(gt[g, :count], preds, match_type, 0.3, ignore)
        assert indices[g].tolist() == want_indices
        np.testing.assert_allclose(overlaps[g], want_overlaps, rtol=1e-6)


def test_per_group_predictions_and_masked_ground_truth():
    """Ground truth masked out in a group (another class) does not take part; columns keep their index."""
    rng = np.random.default_rng(2)
    gt = boxes(rng, 4)
    preds = boxes(rng, 2 * 30).reshape(2, 30, 4)
    valid = np.array([[True, False, True, False], [False, True, False, True]])
    indices, _ = match_boxes(np.stack([gt, gt]), valid, preds, PER_PREDICTION, 0.2, False)
    for g in range(2):
        columns = np.nonzero(valid[g])[0]
        want, _ = reference_match(gt[columns], preds[g], PER_PREDICTION, 0.2, False)
        assert indices[g].tolist() == [int(columns[i]) if i >= 0 else i for i in want]


def test_ties_go_to_the_lowest_prediction_then_ground_truth():
    gt = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]]], np.float32)
    preds = np.array([[[0.5, 0.5, 1, 1], [0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]]], np.float32)
    indices, overlaps = match_boxes(gt, np.ones((1, 2), bool), preds, BIPARTITE, 0.5, False)
    assert indices.tolist() == [[-1, 0, 1]]
    np.testing.assert_array_equal(overlaps, [[0, 1, 1]])


def test_per_prediction_needs_the_threshold():
    gt = np.array([[[0, 0, 0.5, 0.5]]], np.float32)
    preds = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.25], [0, 0, 0.5, 0.2]]], np.float32)
    indices, overlaps = match_boxes(gt, np.ones((1, 1), bool), preds, PER_PREDICTION, 0.5, False)
    assert indices.tolist() == [[0, 0, -1]]
    np.testing.assert_allclose(overlaps, [[1, 0.5, 0.4]], rtol=1e-6)
    indices, _ = match_boxes(gt, np.ones((1, 1), bool), preds, BIPARTITE, 0.5, False)
    assert indices.tolist() == [[0, -1, -1]]


def test_cross_boundary_marked_only_where_there_is_ground_truth():
    preds = np.array([[[-0.1, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]]], np.float32)
    gt = np.array([[[0, 0, 0.5, 0.5]], [[0, 0, 0.5, 0.5]]], np.float32)
    indices, overlaps = match_boxes(gt, np.array([[True], [False]]), preds, PER_PREDICTION, 0.5, True)
    assert indices.tolist() == [[-2, 0], [-1, -1]]
    np.testing.assert_array_equal(overlaps, [[0, 1], [0, 0]])


def test_no_ground_truth_at_all():
    indices, overlaps = match_boxes(np.zeros((2, 0, 4)), np.zeros((2, 0), bool), np.zeros((1, 3, 4)),
                                    PER_PREDICTION, 0.5, False)
    assert indices.tolist() == [[-1] * 3] * 2 and not overlaps.any()
