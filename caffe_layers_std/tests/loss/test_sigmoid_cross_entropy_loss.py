"""SigmoidCrossEntropyLoss: golden case, forward (BATCH_SIZE default), ignore_label, stability, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "l" type: "SigmoidCrossEntropyLoss"'


def reference(x: np.ndarray, t: np.ndarray, valid: np.ndarray, norm: float) -> float:
    p = 1 / (1 + np.exp(-x.astype(np.float64)))
    terms = t * np.log(p) + (1 - t) * np.log(1 - p)
    return -terms[valid].sum() / norm


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("sigmoidcrossentropyloss")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("sigmoidcrossentropyloss") == []


@pytest.mark.parametrize(("mode", "norm"), [("", 10), ("loss_param { normalization: FULL }", 50),
                                            ("loss_param { normalization: VALID }", 50),
                                            ("loss_param { normalization: NONE }", 1),
                                            ("loss_param { normalize: true }", 50)])
def test_forward(run_forward, mode, norm):
    rng = np.random.default_rng(1701)
    x, t = rng.normal(0, 2, (10, 5)), rng.uniform(0, 1, (10, 5))
    _, _, tops = run_forward(f"{LAYER} {mode}", [x, t])
    expected = reference(x, t, np.ones(x.shape, bool), norm)
    np.testing.assert_allclose(float(tops[0].cpu_data()), expected, rtol=1e-5)


def test_ignore_label_with_valid_normalization(run_forward):
    rng = np.random.default_rng(3)
    x, t = rng.normal(0, 2, (4, 3)), rng.integers(0, 2, (4, 3)).astype(float)
    t[0, 1] = t[2, 2] = -1
    _, _, tops = run_forward(f"{LAYER} loss_param {{ ignore_label: -1 normalization: VALID }}", [x, t])
    np.testing.assert_allclose(float(tops[0].cpu_data()), reference(x, t, t != -1, 10), rtol=1e-5)


def test_large_logits_stay_finite(run_forward):
    x = np.array([[1e4, -1e4, 1e4, -1e4]], dtype=np.float32)
    t = np.array([[1, 0, 0, 1]], dtype=np.float32)
    layer, bottoms, tops = run_forward(LAYER, [x, t])
    np.testing.assert_allclose(float(tops[0].cpu_data()), 2e4, rtol=1e-6)
    layer.backward(tops, [True, False], bottoms)
    np.testing.assert_allclose(bottoms[0].cpu_diff(), [[0, 0, 1, -1]], atol=1e-7)


@pytest.mark.parametrize("extra", ["", "loss_param { ignore_label: -1 normalization: VALID }"])
def test_gradient(make_layer, blob_of, extra):
    rng = np.random.default_rng(1701)
    x, t = rng.normal(0, 2, (5, 4)), rng.uniform(0, 1, (5, 4))
    if extra:
        t[1, 2] = t[3, 0] = -1
    layer = make_layer(f"{LAYER} loss_weight: 3 {extra}")
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(
        layer, [blob_of(x), blob_of(t)], [Blob()], check_bottom=0)


def test_counts_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="same count"):
        make_layer(LAYER).setup([blob_of(np.zeros((2, 3))), blob_of(np.zeros((2, 4)))], [Blob()])


def test_backward_to_target_refused(run_forward):
    layer, bottoms, tops = run_forward(LAYER, [np.zeros((2, 3)), np.zeros((2, 3))])
    with pytest.raises(LayerSetupError, match="target"):
        layer.backward(tops, [True, True], bottoms)
