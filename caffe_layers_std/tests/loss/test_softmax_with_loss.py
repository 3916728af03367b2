"""SoftmaxWithLoss: golden case, normalizations, ignore_label, stability, prob top, gradients, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def caffe_data(seed: int = 1701) -> tuple[np.ndarray, np.ndarray]:
    """Caffe's test blobs: 10x5x2x3 Gaussian data (std 10) and labels in [0, 5) of shape 10x1x2x3."""
    rng = np.random.default_rng(seed)
    return rng.normal(0, 10, (10, 5, 2, 3)), rng.integers(0, 5, (10, 1, 2, 3)).astype(float)


def reference(x: np.ndarray, labels: np.ndarray, mode: str, ignore: int | None) -> float:
    z = x.astype(np.float64)
    logp = z - z.max(axis=1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(axis=1, keepdims=True))
    lab = labels.reshape(x.shape[0], *x.shape[2:]).astype(int)
    valid = lab != ignore if ignore is not None else np.ones(lab.shape, bool)
    picked = np.take_along_axis(logp, np.where(valid, lab, 0)[:, None], axis=1)[:, 0]
    loss = -picked[valid].sum()
    outer, inner = x.shape[0], int(np.prod(x.shape[2:]))
    norm = {"FULL": outer * inner, "VALID": valid.sum(), "BATCH_SIZE": outer, "NONE": 1}[mode]
    return loss / max(1, norm)


@pytest.mark.parametrize("case", ["softmaxwithloss", "softmaxwithloss_prob_top"])
def test_golden(golden_case, device_mode, case):
    assert check_layer_case(golden_case(case)) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("softmaxwithloss") == []


@pytest.mark.parametrize("mode", ["FULL", "VALID", "BATCH_SIZE", "NONE"])
@pytest.mark.parametrize("ignore", [None, 2])
def test_forward(run_forward, mode, ignore):
    x, labels = caffe_data()
    ignore_text = f"ignore_label: {ignore}" if ignore is not None else ""
    _, _, tops = run_forward(f'name: "l" type: "SoftmaxWithLoss" '
                             f'loss_param {{ normalization: {mode} {ignore_text} }}', [x, labels])
    np.testing.assert_allclose(float(tops[0].cpu_data()), reference(x, labels, mode, ignore), rtol=1e-5)


@pytest.mark.parametrize(("normalize", "mode"), [("true", "VALID"), ("false", "BATCH_SIZE")])
def test_deprecated_normalize(run_forward, normalize, mode):
    x, labels = caffe_data()
    _, _, tops = run_forward(f'name: "l" type: "SoftmaxWithLoss" loss_param {{ normalize: {normalize} '
                             f'ignore_label: 1 }}', [x, labels])
    np.testing.assert_allclose(float(tops[0].cpu_data()), reference(x, labels, mode, 1), rtol=1e-5)


def test_ignore_label_sums_to_four_times_full_loss(run_forward):
    x, labels = caffe_data()
    text = 'name: "l" type: "SoftmaxWithLoss" loss_param {{ normalize: false {} }}'
    full = float(run_forward(text.format(""), [x, labels])[2][0].cpu_data())
    partial = sum(float(run_forward(text.format(f"ignore_label: {i}"), [x, labels])[2][0].cpu_data())
                  for i in range(5))
    np.testing.assert_allclose(partial, 4 * full, rtol=1e-4)


def test_all_ignored_gives_zero(run_forward):
    _, _, tops = run_forward('name: "l" type: "SoftmaxWithLoss" loss_param { ignore_label: 1 }',
                             [np.ones((3, 4)), [1, 1, 1]])
    assert float(tops[0].cpu_data()) == 0.0


def test_large_logits_stay_finite(run_forward):
    x = np.array([[1e4, 0, -1e4], [-1e4, 1e4, 1e4]], dtype=np.float32)
    layer, bottoms, tops = run_forward('name: "l" type: "SoftmaxWithLoss"', [x, [0, 0]])
    # The second item's true-class probability underflows; Caffe clamps it at FLT_MIN before the log.
    clamped = -np.log(np.finfo(np.float32).tiny, dtype=np.float64)
    np.testing.assert_allclose(float(tops[0].cpu_data()), clamped / 2, rtol=1e-6)
    layer.backward(tops, [True, False], bottoms)
    assert np.isfinite(bottoms[0].cpu_diff()).all()


def test_prob_top(run_forward):
    x, labels = caffe_data()
    layer, _, tops = run_forward('name: "l" type: "SoftmaxWithLoss"', [x, labels], num_tops=2)
    assert (layer.loss(0), layer.loss(1)) == (1.0, 0.0)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(tops[1].cpu_data(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("extra", ["", "loss_param { ignore_label: 0 }", "loss_param { normalize: false }",
                                   "loss_param { normalization: FULL }"])
def test_gradient(make_layer, blob_of, extra):
    x, labels = caffe_data()
    layer = make_layer(f'name: "l" type: "SoftmaxWithLoss" loss_weight: 3 {extra}')
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(
        layer, [blob_of(x), blob_of(labels)], [Blob()], check_bottom=0)


def test_gradient_along_axis_2(make_layer, blob_of):
    rng = np.random.default_rng(12)
    x, labels = rng.normal(0, 10, (3, 2, 5, 2)), rng.integers(0, 5, (3, 2, 2)).astype(float)
    layer = make_layer('name: "l" type: "SoftmaxWithLoss" softmax_param { axis: 2 }')
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(
        layer, [blob_of(x), blob_of(labels)], [Blob()], check_bottom=0)


def test_gradient_of_the_loss_with_a_prob_top(make_layer, blob_of):
    rng = np.random.default_rng(11)
    x, labels = rng.standard_normal((3, 4)), [0, 3, 1]
    layer = make_layer('name: "l" type: "SoftmaxWithLoss" loss_weight: 1 loss_weight: 0')
    bottom, top = [blob_of(x), blob_of(labels)], [Blob(), Blob()]
    layer.setup(bottom, top)
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_single(layer, bottom, top, 0, 0, 0)


def test_backward_ignores_the_prob_tops_diff_as_caffe(run_forward):
    x, labels = caffe_data()
    layer, bottoms, tops = run_forward('name: "l" type: "SoftmaxWithLoss"', [x, labels], num_tops=2)
    tops[0].mutable_cpu_diff()[...] = 1
    layer.backward(tops, [True, False], bottoms)
    without = bottoms[0].cpu_diff().copy()
    tops[1].mutable_cpu_diff()[...] = np.random.default_rng(3).standard_normal(tops[1].shape)
    layer.backward(tops, [True, False], bottoms)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), without)
    assert layer.backward_ignores_tops == (1,)


def test_label_out_of_range(run_forward):
    with pytest.raises(LayerSetupError, match="outside"):
        run_forward('name: "l" type: "SoftmaxWithLoss"', [np.zeros((2, 3)), [0, 3]])


def test_label_count_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="number of labels"):
        make_layer('name: "l" type: "SoftmaxWithLoss"').setup(
            [blob_of(np.zeros((2, 3, 2))), blob_of([0, 1])], [Blob()])


def test_backward_to_label_refused(run_forward):
    layer, bottoms, tops = run_forward('name: "l" type: "SoftmaxWithLoss"', [np.zeros((2, 3)), [0, 1]])
    with pytest.raises(LayerSetupError, match="label bottom"):
        layer.backward(tops, [True, True], bottoms)
