"""LabelsequenceAccuracy (jolibrain/caffe): exact best-path matches against the fork's Forward_cpu loop,
by hand, refusals, GPU mode."""

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2

F = np.float32


def text(blank=None):
    block = "" if blank is None else f" labelsequence_accuracy_param {{ blank_label: {blank} }}"
    return f'name: "acc" type: "LabelsequenceAccuracy" bottom: "x" bottom: "label" top: "acc"{block}'


def fork_accuracy(scores, labels, blank):
    """Forward_cpu: max_element per step, GetLabelseqs (prev starts at the blank), row minus blanks, hit."""
    hits = 0
    for n in range(scores.shape[0]):
        path = [int(np.argmax(scores[n, t])) for t in range(scores.shape[1])]
        predicted, prev = [], blank
        for cur in path:
            if cur != prev and cur != blank:
                predicted.append(cur)
            prev = cur
        target = [int(v) for v in labels[n] if v != blank]
        hits += predicted == target
    return hits / scores.shape[0]


def test_by_hand(run):
    # Paths 1 1 0 2 -> [1, 2] and 0 3 3 0 -> [3]; targets [1, 2] (hit) and [3, 3] (miss).
    scores = np.zeros((2, 4, 4), dtype=F)
    for n, path in enumerate([[1, 1, 0, 2], [0, 3, 3, 0]]):
        for t, c in enumerate(path):
            scores[n, t, c] = 1
    labels = np.array([[1, 2, 0], [3, 3, 0]], dtype=F)
    _, _, top = run(text(), [scores, labels], phase=caffe_pb2.TEST)
    assert float(top[0].cpu_data()) == 0.5


@pytest.mark.parametrize("blank", [0, 3])
def test_matches_the_forks_loop(run, blank):
    rng = np.random.default_rng(blank)
    scores = np.round(rng.normal(size=(40, 6, 4)), 1).astype(F)
    scores[:, :, blank] += 0.8  # blanks often win, so that short paths (and hits) occur
    labels = np.full((40, 6), blank, dtype=F)
    for n in range(40):
        path = np.argmax(scores[n], axis=1)
        keep = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if n % 2:
            keep = keep[:-1] + [(keep[-1] + 1) % 4] if keep else [1]
        labels[n, :len(keep)] = keep
    _, _, top = run(text(blank), [scores, labels], phase=caffe_pb2.TEST)
    expected = fork_accuracy(scores, labels, blank)
    assert 0 < expected < 1
    assert float(top[0].cpu_data()) == pytest.approx(expected)


def test_refuses_another_batch(run):
    with pytest.raises(LayerSetupError, match="batch size"):
        run(text(), [np.zeros((2, 4, 3), dtype=F), np.zeros((3, 2), dtype=F)])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    scores = np.random.default_rng(9).normal(size=(5, 6, 4)).astype(F)
    labels = np.array([[1, 2, 0], [3, 0, 0], [1, 1, 2], [0, 0, 0], [2, 3, 1]], dtype=F)
    gpu_matches_cpu(text(), [scores, labels], phase=caffe_pb2.TEST)
