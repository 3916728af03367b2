"""CTCGreedyDecoder (senlinuc/caffe_ocr): best path with repeats merged and blanks dropped, checked against
the fork's Decode loop written out; ctc_merge_repeated false; blank_index -1 (the last class); the
two-bottom accuracy (edit distance, exact lines) against a plain Levenshtein; GPU mode."""

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2

F = np.float32


def text(bottoms=("x",), params=""):
    names = " ".join(f'bottom: "{b}"' for b in bottoms)
    block = f" ctc_decoder_param {{ {params} }}" if params else ""
    return f'name: "dec" type: "CTCGreedyDecoder" {names} top: "y"{block}'


def fork_decode(scores, blank, merge):
    """CTCGreedyDecoderLayer::Decode (the one-bottom overload): first maximum (strict >) per step."""
    steps, num, classes = scores.shape
    out = []
    for n in range(num):
        seq, previous = [], -1
        for t in range(steps):
            best = 0
            for c in range(1, classes):
                if scores[t, n, c] > scores[t, n, best]:
                    best = c
            if best != blank and not (merge and best == previous):
                seq.append(best)
            previous = best
        out.append(seq)
    return out


def levenshtein(a, b):
    d = np.zeros((len(a) + 1, len(b) + 1), dtype=int)
    d[:, 0], d[0, :] = range(len(a) + 1), range(len(b) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return d[-1, -1]


def test_by_hand(run):
    # Best classes over 7 steps: 1 1 0 1 2 2 0 -> 1 1 2 (merged, blanks dropped); 0 0 0 0 0 0 0 -> nothing.
    scores = np.zeros((7, 2, 3), dtype=F)
    for t, c in enumerate([1, 1, 0, 1, 2, 2, 0]):
        scores[t, 0, c] = 1
    scores[:, 1, 0] = 1
    _, _, top = run(text(), [scores])
    assert top[0].shape == (2, 7, 1, 1)
    np.testing.assert_array_equal(top[0].cpu_data()[:, :, 0, 0],
                                  [[1, 1, 2, -1, -1, -1, -1], [-1] * 7])


@pytest.mark.parametrize(("params", "blank", "merge"), [
    ("", 0, True), ("ctc_merge_repeated: false", 0, False), ("blank_index: -1", 4, True),
    ("blank_index: 2 ctc_merge_repeated: false", 2, False),
])
def test_matches_the_forks_loop(run, params, blank, merge):
    # Few classes and rounded scores make repeats and ties (the first maximum wins) frequent.
    scores = np.round(np.random.default_rng(0).normal(size=(9, 6, 5)), 1).astype(F)
    _, _, top = run(text(params=params), [scores])
    for n, seq in enumerate(fork_decode(scores, blank, merge)):
        row = top[0].cpu_data()[n, :, 0, 0]
        np.testing.assert_array_equal(row[:len(seq)], seq)
        assert (row[len(seq):] == -1).all()


def test_accuracy_against_levenshtein(run):
    scores = np.random.default_rng(1).normal(size=(8, 5, 4)).astype(F)
    decoded = fork_decode(scores, 0, True)
    # Targets: one exact, one off by an edit, one longer, an empty pair if the decode is empty, and a
    # target whose -1 ends it early; blanks (0) inside a target are left out.
    targets = [list(decoded[0]), list(decoded[1]) + [3], [1, 2, 3, 1, 2], [], [2, 0, 1]]
    rows = np.full((5, 6), -1, dtype=F)
    for n, seq in enumerate(targets):
        rows[n, :len(seq)] = seq
    rows[4, 4:] = [3, 3]  # after the -1 at position 3: ignored
    _, _, top = run(text(("x", "label")), [scores, rows])
    ratios, exact = [], 0
    for n, seq in enumerate(targets):
        target = [c for c in seq if c != 0]
        longer = max(len(target), len(decoded[n]))
        if longer == 0:
            continue
        distance = levenshtein(target, decoded[n])
        ratios.append(distance / longer)
        exact += distance == 0
    assert top[0].shape == (1, 2, 1, 1)
    np.testing.assert_allclose(top[0].cpu_data().ravel(), [1 - sum(ratios) / 5, exact / 5], rtol=1e-6)


def test_refuses_labels_of_another_batch(run):
    with pytest.raises(LayerSetupError, match="N x L"):
        run(text(("x", "label")), [np.zeros((4, 2, 3), dtype=F), np.zeros((3, 2), dtype=F)])


@pytest.mark.gpu
@pytest.mark.parametrize("bottoms", [("x",), ("x", "label")])
def test_gpu_matches_cpu(gpu_matches_cpu, bottoms):
    scores = np.random.default_rng(2).normal(size=(8, 3, 4)).astype(F)
    labels = np.array([[1, 2, -1], [3, 1, 2], [2, -1, -1]], dtype=F)
    gpu_matches_cpu(text(bottoms), [scores, labels][:len(bottoms)], phase=caffe_pb2.TEST)
