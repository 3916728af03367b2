"""Accuracy: golden case, top_k against a reference, ties, ignore_label, axis, per-class top, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing.golden import check_layer_case


def reference(scores: np.ndarray, labels: np.ndarray, top_k: int, ignore=None) -> tuple[float, np.ndarray]:
    """Caffe's rule: correct when fewer than top_k other classes score at least the true class."""
    hits, counts, per_hits = 0, np.zeros(scores.shape[1]), np.zeros(scores.shape[1])
    for row, label in zip(scores, labels.astype(int), strict=True):
        if label == ignore:
            continue
        counts[label] += 1
        if (row >= row[label]).sum() - 1 < top_k:
            hits += 1
            per_hits[label] += 1
    total = counts.sum()
    return (hits / total if total else 0.0), np.where(counts > 0, per_hits / np.maximum(counts, 1), 0)


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("accuracy")) == []


@pytest.mark.parametrize("top_k", [1, 2, 4])
@pytest.mark.parametrize("ignore", [None, 3])
def test_forward(run_forward, top_k, ignore, device_mode):
    rng = np.random.default_rng(1701)
    scores, labels = rng.standard_normal((100, 10)), rng.integers(0, 10, 100).astype(float)
    ignore_text = f"ignore_label: {ignore}" if ignore is not None else ""
    _, _, tops = run_forward(f'name: "a" type: "Accuracy" accuracy_param {{ top_k: {top_k} {ignore_text} }}',
                             [scores, labels], num_tops=2)
    accuracy, per_class = reference(scores.astype(np.float32), labels, top_k, ignore)
    np.testing.assert_allclose(float(tops[0].cpu_data()), accuracy, rtol=1e-6)
    np.testing.assert_allclose(tops[1].cpu_data(), per_class, rtol=1e-6)


def test_tie_counts_against_the_true_class(run_forward):
    scores = np.array([[1, 2, 2], [3, 3, 0], [0, 1, 5]], dtype=np.float32)
    _, _, tops = run_forward('name: "a" type: "Accuracy"', [scores, [2, 0, 2]])
    assert float(tops[0].cpu_data()) == pytest.approx(1 / 3)


def test_axis(run_forward):
    rng = np.random.default_rng(2)
    scores, labels = rng.standard_normal((2, 4, 3, 2)), rng.integers(0, 4, (2, 3, 2)).astype(float)
    _, _, tops = run_forward('name: "a" type: "Accuracy" accuracy_param { axis: 1 }', [scores, labels])
    flat = np.moveaxis(scores, 1, -1).reshape(-1, 4)
    assert float(tops[0].cpu_data()) == pytest.approx(reference(flat, labels.ravel(), 1)[0])


def test_all_ignored_gives_zero(run_forward):
    _, _, tops = run_forward('name: "a" type: "Accuracy" accuracy_param { ignore_label: 0 }',
                             [np.ones((2, 3)), [0, 0]])
    assert float(tops[0].cpu_data()) == 0.0


def test_top_k_larger_than_classes_refused(make_layer, blob_of):
    layer = make_layer('name: "a" type: "Accuracy" accuracy_param { top_k: 4 }')
    with pytest.raises(LayerSetupError, match="top_k"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob()])


def test_top_k_equal_to_classes_counts_every_prediction(run_forward):
    """Caffe's CHECK_LE admits top_k == classes; then every label is among the top_k scores."""
    scores = np.array([[3, 2, 1], [0, 1, 5]], dtype=np.float32)
    _, _, tops = run_forward('name: "a" type: "Accuracy" accuracy_param { top_k: 3 }', [scores, [2, 0]])
    assert float(tops[0].cpu_data()) == 1.0


def test_backward_refused(run_forward):
    layer, bottoms, tops = run_forward('name: "a" type: "Accuracy"', [np.zeros((2, 3)), [0, 1]])
    assert layer.loss(0) == 0.0
    with pytest.raises(LayerSetupError, match="cannot back-propagate"):
        layer.backward(tops, [True, False], bottoms)


def test_axis_out_of_range_names_the_field(make_layer, blob_of):
    """Caffe's CanonicalAxisIndex check, reported under the parameter that set the axis."""
    layer = make_layer('name: "a" type: "Accuracy" accuracy_param { axis: 2 }')
    with pytest.raises(LayerSetupError, match="'a'.*accuracy_param.axis: axis 2 out of range"):
        layer.setup([blob_of(np.zeros((2, 3))), blob_of([0, 1])], [Blob()])
