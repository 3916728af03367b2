"""WarpCTCLoss (senlinuc/caffe_ocr): its three ways of passing labels give the brute-force CTC costs; the
loss is their mean, the gradient that of their sum (gradient-checked on one sequence); blank_index; the
fork's CHECKs; GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

F = np.float32


def text(bottoms=("x", "label"), blank=None):
    block = "" if blank is None else f" warp_ctc_loss_param {{ blank_index: {blank} }}"
    names = " ".join(f'bottom: "{b}"' for b in bottoms)
    return f'name: "ctc" type: "WarpCTCLoss" {names} top: "loss"{block}'


def activations(seed, shape=(5, 3, 4)):
    return np.random.default_rng(seed).normal(size=shape).astype(F)


def test_two_bottoms_blank_padded_labels(run, brute_force):
    # caffe_ocr's nets: label rows padded with the blank (0); every sequence uses all T steps.
    x = activations(0)
    labels = np.array([[1, 2, 0, 0], [3, 3, 0, 0], [0, 2, 0, 0]], dtype=F)
    _, _, top = run(text(), [x, labels])
    expected = np.mean([brute_force(x[:, 0], [1, 2], 0), brute_force(x[:, 1], [3, 3], 0),
                        brute_force(x[:, 2], [2], 0)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)


def test_blank_index_last_class(run, brute_force):
    x = activations(1)
    labels = np.array([[0, 2, 3], [1, 3, 3], [2, 0, 3]], dtype=F)
    _, _, top = run(text(blank=3), [x, labels])
    expected = np.mean([brute_force(x[:, 0], [0, 2], 3), brute_force(x[:, 1], [1], 3),
                        brute_force(x[:, 2], [2, 0], 3)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)


def test_four_bottoms_lengths_and_time_major_labels(run, brute_force):
    x = activations(2)
    seq_len = np.array([5, 4, 3], dtype=F)
    lab_len = np.array([2, 1, 2], dtype=F)
    labels = np.array([[1, 2, 3], [2, 9, 1], [9, 9, 9]], dtype=F)  # (L, N): column n holds sequence n
    _, _, top = run(text(("x", "seq_len", "lab_len", "label")), [x, seq_len, lab_len, labels])
    expected = np.mean([brute_force(x[:5, 0], [1, 2], 0), brute_force(x[:4, 1], [2], 0),
                        brute_force(x[:3, 2], [3, 1], 0)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)


def test_three_bottoms_indicators_and_targets(run, brute_force):
    # Indicators: a 0 after step 0 ends the sequence; targets end at a negative value and, with blank 0,
    # are shifted up by one (the fork's label_offset).
    x = activations(3)
    indicators = np.array([[0, 0, 0], [1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], dtype=F)
    targets = np.array([[0, 2, 1], [1, -1, -1], [-1, -1, -1], [-1, -1, -1], [-1, -1, -1]], dtype=F)
    _, _, top = run(text(("x", "indicators", "targets")), [x, indicators, targets])
    expected = np.mean([brute_force(x[:5, 0], [1, 2], 0), brute_force(x[:3, 1], [3], 0),
                        brute_force(x[:2, 2], [2], 0)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)


def test_unfit_sequences_cost_zero_and_count_in_the_mean(run, brute_force):
    # [1, 1, 1] needs 5 steps; with 3, warp-ctc's cost is 0 (and the fork averages it in).
    x = activations(4, (3, 2, 3))
    labels = np.array([[1, 1, 1], [2, 0, 0]], dtype=F)
    _, _, top = run(text(), [x, labels])
    assert float(top[0].cpu_data()) == pytest.approx(brute_force(x[:, 1], [2], 0) / 2, rel=1e-5)


def test_gradient_check_one_sequence(make_layer, blob_of):
    x = activations(5, (5, 1, 4))
    bottom = [blob_of(x), blob_of(np.array([[2, 2, 0]], dtype=F))]
    GradientChecker(1e-2, 1e-3, 1701).check_gradient_exhaustive(make_layer(text()), bottom, [Blob()],
                                                                 check_bottom=0)


def test_gradient_is_the_sum_of_the_sequences(run):
    # The fork writes warp-ctc's per-sequence gradients as they are: backward = sum over n of d cost_n / dx.
    x = activations(6)
    labels = np.array([[1, 2, 0], [3, 0, 0], [2, 2, 0]], dtype=F)
    layer, bottom, top = run(text(), [x, labels])
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, False], bottom)
    whole = bottom[0].cpu_diff().copy()
    for n in range(3):
        layer_n, one_bottom, one_top = run(text(), [x[:, n:n + 1].copy(), labels[n:n + 1]])
        one_top[0].mutable_cpu_diff()[...] = 1
        layer_n.backward(one_top, [True, False], one_bottom)
        np.testing.assert_allclose(whole[:, n:n + 1], one_bottom[0].cpu_diff(), atol=1e-6)


@pytest.mark.parametrize(("bottoms", "arrays", "message"), [
    (("x", "label"), [np.zeros((5, 2, 4)), np.zeros((3, 2))], "N x L"),
    (("x", "label"), [np.zeros((5, 2, 4, 2)), np.zeros((2, 2))], "T x N x C"),
    (("x", "label"), [np.zeros((5, 2, 4)), np.array([[1, 4], [1, 1]])], "outside"),
    (("x", "i", "t"), [np.zeros((5, 2, 4)), np.zeros((5, 3)), np.zeros((5, 2))], "T x N"),
    (("x", "i", "t"), [np.zeros((2, 1, 4)), np.zeros((2, 1)), np.zeros((2, 1))], "smaller or equal"),
    (("x", "s", "l", "y"), [np.zeros((5, 2, 4)), np.zeros(3), np.zeros(2), np.zeros((2, 2))], "N values"),
    (("x", "s", "l", "y"), [np.zeros((5, 2, 4)), np.array([6, 1]), np.array([1, 1]), np.ones((2, 2))],
     "sequence length"),
])
def test_refusals(run, bottoms, arrays, message):
    with pytest.raises(LayerSetupError, match=message):
        run(text(bottoms), [np.asarray(a, dtype=F) for a in arrays])


def test_refuses_a_negative_blank_index(run):
    with pytest.raises(LayerSetupError, match="blank_index"):
        run(text(blank=-1), [np.zeros((5, 2, 4), dtype=F), np.ones((2, 2), dtype=F)])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    labels = np.array([[1, 2, 0], [3, 3, 0], [2, 0, 0]], dtype=F)
    gpu_matches_cpu(text(), [activations(7), labels], propagate_down=[True, False])
