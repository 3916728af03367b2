"""The CTC machinery (warp-ctc's algorithm): costs equal the brute-force sum over every alignment on tiny
sizes, gradients equal finite differences of the summed costs, and warp-ctc's edge cases."""

import numpy as np
import pytest

from caffe_layers_ocr.ctc import compact_labels, ctc_cost_and_grad

CASES = [
    # labels per sequence, steps per sequence, T, C, blank
    ([[1, 2], [3, 3], [2]], [5, 4, 3], 5, 4, 0),
    ([[1, 1, 1], [2], []], [5, 5, 4], 5, 3, 0),
    ([[0, 1], [1, 0, 1]], [4, 5], 5, 3, 2),
    ([[2, 2], [1, 2, 1]], [6, 6], 6, 3, 0),
]


def padded(labels):
    width = max(len(seq) for seq in labels)
    out = np.zeros((len(labels), width), dtype=np.int64)
    for n, seq in enumerate(labels):
        out[n, :len(seq)] = seq
    return out, np.array([len(seq) for seq in labels])


@pytest.mark.parametrize(("labels", "steps", "t", "c", "blank"), CASES)
def test_costs_are_the_sum_over_all_alignments(brute_force, labels, steps, t, c, blank):
    x = np.random.default_rng(len(labels) + t).normal(size=(t, len(labels), c)).astype(np.float32)
    flat, lengths = padded(labels)
    costs, _ = ctc_cost_and_grad(np, x, flat, lengths, np.array(steps), blank)
    expected = [brute_force(x[:steps[n], n], labels[n], blank) for n in range(len(labels))]
    np.testing.assert_allclose(costs, expected, rtol=1e-12)


@pytest.mark.parametrize(("labels", "steps", "t", "c", "blank"), CASES)
def test_gradient_is_the_summed_costs_derivative(labels, steps, t, c, blank):
    x = np.random.default_rng(7).normal(size=(t, len(labels), c))
    flat, lengths = padded(labels)
    steps = np.array(steps)
    _, grad = ctc_cost_and_grad(np, x, flat, lengths, steps, blank)
    numeric = np.zeros_like(x)
    eps = 1e-6
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        numeric[index] = (ctc_cost_and_grad(np, up, flat, lengths, steps, blank)[0].sum()
                          - ctc_cost_and_grad(np, down, flat, lengths, steps, blank)[0].sum()) / (2 * eps)
    np.testing.assert_allclose(grad, numeric, atol=1e-7)
    # Steps past a sequence's length get no gradient; each used step's gradient sums to 0 over classes.
    for n, length in enumerate(steps):
        assert not grad[length:, n].any()
        np.testing.assert_allclose(grad[:length, n].sum(axis=1), 0, atol=1e-12)


def test_labels_that_cannot_fit_cost_zero_with_no_gradient_as_warp_ctc():
    # [1, 1] needs 3 steps (a blank between the repeats): with 2 steps warp-ctc returns 0 and no gradient.
    x = np.random.default_rng(0).normal(size=(2, 2, 3))
    costs, grad = ctc_cost_and_grad(np, x, np.array([[1, 1], [1, 2]]), np.array([2, 2]), np.array([2, 2]), 0)
    assert costs[0] == 0 and not grad[:, 0].any()
    assert costs[1] > 0 and grad[:, 1].any()


def test_a_certain_alignment_costs_nothing():
    # One-hot activations scaled up: the path blank,1,2,2 is the only likely one and collapses to [1, 2].
    x = np.full((4, 1, 3), -50.0)
    for t, c in enumerate([0, 1, 2, 2]):
        x[t, 0, c] = 50.0
    costs, grad = ctc_cost_and_grad(np, x, np.array([[1, 2]]), np.array([2]), np.array([4]), 0)
    assert costs[0] == pytest.approx(0, abs=1e-12)
    np.testing.assert_allclose(grad, 0, atol=1e-12)


def test_compact_labels_moves_the_kept_labels_to_the_front():
    labels = np.array([[0, 3, 0, 2, 1], [4, 0, 0, 0, 0]])
    out, lengths = compact_labels(np, labels, labels != 0)
    np.testing.assert_array_equal(lengths, [3, 1])
    np.testing.assert_array_equal(out[0, :3], [3, 2, 1])
    np.testing.assert_array_equal(out[1, :1], [4])
