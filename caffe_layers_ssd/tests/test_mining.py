"""Per-prior losses and example selection: softmax and logistic confidence losses, smooth L1 / L2,
eligibility, selection counts and the top-loss (optionally NMS-filtered) picks."""

import math

import numpy as np
import pytest

from caffe_layers_ssd import mining


def test_softmax_losses_hand_values():
    logits = np.array([[0.0, 1.0], [2.0, 0.0]], np.float32)
    losses, prob = mining.softmax_losses(logits, [1, 0])
    np.testing.assert_allclose(losses, [math.log1p(math.exp(-1)), math.log1p(math.exp(-2))], rtol=1e-6)
    np.testing.assert_allclose(prob.sum(axis=1), 1, rtol=1e-6)


def test_softmax_loss_is_clamped_at_flt_min():
    losses, _ = mining.softmax_losses(np.array([[0.0, 200.0]], np.float32), [0])
    assert losses[0] == pytest.approx(-math.log(np.finfo(np.float32).tiny))


def test_logistic_losses_hand_values():
    x = np.array([2.0, -1.0, 0.0], np.float32)
    t = np.array([1.0, 1.0, 0.0], np.float32)
    want = [math.log1p(math.exp(-2)), math.log1p(math.exp(1)), math.log(2)]
    np.testing.assert_allclose(mining.logistic_losses(x, t), want, rtol=1e-6)
    np.testing.assert_allclose(mining.sigmoid(x), 1 / (1 + np.exp(-x.astype(float))), rtol=1e-6)


def test_conf_losses_per_prior():
    conf = np.array([[[0.0, 1.0, -1.0], [1.0, 0.0, 0.5]]], np.float32)
    labels = np.array([[1, 0]])
    softmax = mining.conf_losses(conf, labels, mining.SOFTMAX)
    p = np.exp(conf[0].astype(float)) / np.exp(conf[0].astype(float)).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax, [[-math.log(p[0, 1]), -math.log(p[1, 0])]], rtol=1e-6)
    logistic = mining.conf_losses(conf, labels, mining.LOGISTIC)
    targets = np.array([[0, 1, 0], [1, 0, 0]], float)
    want = (np.log1p(np.exp(conf[0])) - conf[0] * targets).sum(axis=1)
    np.testing.assert_allclose(logistic[0], want, rtol=1e-5)


def test_loc_errors_and_gradients():
    diff = np.array([0.5, -0.5, 1.0, -2.0, 0.0], np.float32)
    np.testing.assert_allclose(mining.loc_errors(diff, mining.SMOOTH_L1), [0.125, 0.125, 0.5, 1.5, 0])
    np.testing.assert_allclose(mining.loc_errors(diff, mining.L2), [0.125, 0.125, 0.5, 2, 0])
    np.testing.assert_allclose(mining.loc_gradient(diff, mining.SMOOTH_L1), [0.5, -0.5, 1, -1, 0])
    np.testing.assert_allclose(mining.loc_gradient(diff, mining.L2), diff)


def test_eligibility_and_selection_size():
    match = np.array([[0, -1, -1, -2, 1, -1]])
    overlaps = np.array([[0.7, 0.2, 0.6, 0.0, 0.8, 0.49]], np.float32)
    negatives = mining.eligible_for_mining(mining.MAX_NEGATIVE, match, overlaps, 0.5)
    assert negatives.tolist() == [[False, True, False, False, False, True]]
    assert mining.eligible_for_mining(mining.HARD_EXAMPLE, match, overlaps, 0.5).all()
    assert not mining.eligible_for_mining(mining.NONE, match, overlaps, 0.5).any()
    # 2 positives x 0.7 = 1.4 -> 1 negative; 2 positives x 3 = 6 -> capped at the 2 eligible.
    assert mining.selection_size(mining.MAX_NEGATIVE, match, negatives, 0.7, 64).tolist() == [1]
    assert mining.selection_size(mining.MAX_NEGATIVE, match, negatives, 3.0, 64).tolist() == [2]
    assert mining.selection_size(mining.HARD_EXAMPLE, match, np.ones((1, 6), bool), 3, 4).tolist() == [4]


def test_select_examples_by_loss():
    loss = np.array([[0.1, 0.9, 0.5, 0.9, 0.3], [1, 2, 3, 4, 5]], np.float32)
    eligible = np.array([[True, True, True, True, False], [True] * 5])
    selected = mining.select_examples(loss, eligible, np.array([3, 0]))
    # Ties (0.9, 0.9) go to the lower prior; the ineligible prior 4 is never picked.
    assert selected.tolist() == [[False, True, True, True, False], [False] * 5]
    selected = mining.select_examples(loss, eligible, np.array([2, 2]))
    assert selected.tolist() == [[False, True, False, True, False], [False, False, False, True, True]]


def test_select_examples_after_nms():
    boxes = np.array([[[0, 0, 0.5, 0.5], [0, 0, 0.5, 0.45], [0.5, 0.5, 1, 1], [0.6, 0, 1, 0.4]]], np.float32)
    loss = np.array([[3.0, 2.0, 1.0, 0.5]], np.float32)
    eligible = np.ones((1, 4), bool)
    selected = mining.select_examples(loss, eligible, np.array([2]), boxes, 0.5, -1)
    assert selected.tolist() == [[True, False, True, False]]
    selected = mining.select_examples(loss, eligible, np.array([2]), boxes, 0.5, 0)
    assert not selected.any()
