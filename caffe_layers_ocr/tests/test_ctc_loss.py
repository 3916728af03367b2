"""CtcLoss (jolibrain/caffe): the loss is the mean of the brute-force CTC costs; the gradient is that of their
sum (warp-ctc's, not divided by N, as the fork), gradient-checked; the fork's CHECKs; GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker


def text(alphabet_size=4, time_step=5, blank=0):
    return (f'name: "ctc" type: "CtcLoss" bottom: "x" bottom: "label" top: "loss" ctc_loss_param {{ '
            f'alphabet_size: {alphabet_size} time_step: {time_step} blank_label: {blank} }}')


def test_loss_is_the_mean_brute_force_cost(run, brute_force):
    x = np.random.default_rng(0).normal(size=(5, 3, 4)).astype(np.float32)
    # Blank-padded label rows, as deepdetect writes them; a blank anywhere is left out.
    labels = np.array([[1, 2, 0], [3, 0, 3], [0, 2, 0]], dtype=np.float32)
    _, _, top = run(text(), [x, labels])
    expected = np.mean([brute_force(x[:, 0], [1, 2], 0), brute_force(x[:, 1], [3, 3], 0),
                        brute_force(x[:, 2], [2], 0)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)


def test_time_step_below_t_uses_the_first_steps(run, brute_force):
    x = np.random.default_rng(1).normal(size=(6, 2, 3)).astype(np.float32)
    labels = np.array([[1, 2], [2, 0]], dtype=np.float32)
    layer, bottom, top = run(text(alphabet_size=3, time_step=4, blank=0), [x, labels])
    expected = np.mean([brute_force(x[:4, 0], [1, 2], 0), brute_force(x[:4, 1], [2], 0)])
    assert float(top[0].cpu_data()) == pytest.approx(expected, rel=1e-5)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, False], bottom)
    assert not bottom[0].cpu_diff()[4:].any()


def test_gradient_check_one_sequence(make_layer, blob_of):
    # With N = 1 the fork's gradient (of the summed costs) is the loss's own.
    x = np.random.default_rng(2).normal(size=(5, 1, 4)).astype(np.float32)
    bottom = [blob_of(x), blob_of(np.array([[2, 1, 0]], dtype=np.float32))]
    GradientChecker(1e-2, 1e-3, 1701).check_gradient_exhaustive(make_layer(text()), bottom, [Blob()],
                                                                 check_bottom=0)


def test_gradient_is_n_times_the_mean_losss_with_the_loss_weight(run):
    # N = 3: backward gives loss_weight x d(sum of costs)/dx = loss_weight x N x d(loss)/dx.
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 3, 3)).astype(np.float32)
    labels = np.array([[1, 2], [2, 0], [1, 1]], dtype=np.float32)
    layer, bottom, top = run(text(alphabet_size=3, time_step=4), [x, labels])
    top[0].mutable_cpu_diff()[...] = 0.5
    layer.backward(top, [True, False], bottom)
    eps = 1e-3
    numeric = np.zeros(x.shape)
    for index in np.ndindex(x.shape):
        losses = []
        for shift in (eps, -eps):
            bottom[0].mutable_cpu_data()[index] = x[index] + shift
            layer.forward(bottom, top)
            losses.append(float(top[0].cpu_data()))
        bottom[0].mutable_cpu_data()[index] = x[index]
        numeric[index] = (losses[0] - losses[1]) / (2 * eps)
    np.testing.assert_allclose(bottom[0].cpu_diff(), 0.5 * 3 * numeric, atol=2e-3)


@pytest.mark.parametrize(("params", "shape", "labels", "message"), [
    ({"alphabet_size": 0}, (5, 2, 4), [[1], [2]], "alphabet_size"),
    ({"time_step": 0}, (5, 2, 4), [[1], [2]], "time_step"),
    ({"alphabet_size": 5}, (5, 2, 4), [[1], [2]], "alphabet_size"),
    ({"time_step": 6}, (5, 2, 4), [[1], [2]], "time_step"),
    ({}, (5, 2, 4), [[1], [2], [3]], "batch size"),
    ({}, (5, 2, 4), [[1], [4]], "outside"),
    ({}, (5, 2, 4), [[0], [0]], "empty"),
])
def test_refusals(run, params, shape, labels, message):
    with pytest.raises(LayerSetupError, match=message):
        run(text(**params), [np.zeros(shape, dtype=np.float32), np.array(labels, dtype=np.float32)])


def test_refuses_backward_to_the_labels(run):
    layer, bottom, top = run(text(), [np.zeros((5, 1, 4), dtype=np.float32), np.array([[1.0]])])
    with pytest.raises(LayerSetupError, match="label"):
        layer.backward(top, [True, True], bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(4).normal(size=(5, 3, 4)).astype(np.float32)
    labels = np.array([[1, 2, 0], [3, 3, 0], [2, 0, 0]], dtype=np.float32)
    gpu_matches_cpu(text(), [x, labels], propagate_down=[True, False])
