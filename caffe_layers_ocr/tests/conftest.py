"""caffe_layers_ocr's own test helpers: CTC by brute force (the sum over every alignment) and `run`.
CPU mode, seed 1701, `make_layer`, `blob_of`, `golden_case` and `gpu_matches_cpu` come from the core's
pytest plugin."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.layer import Layer


def collapse(path: Sequence[int], blank: int) -> list[int]:
    """CTC's many-to-one map: merge repeated classes, then drop blanks."""
    out, previous = [], None
    for c in path:
        if c != previous and c != blank:
            out.append(int(c))
        previous = c
    return out


def brute_force_cost(activations: np.ndarray, labels: Sequence[int], blank: int) -> float:
    """-log of the summed probability of every path of len(activations) steps that collapses to labels.

    activations (T, C), unnormalised; the softmax is taken over C in float64.
    """
    x = activations.astype(np.float64)
    log_probs = x - x.max(axis=1, keepdims=True)
    log_probs -= np.log(np.exp(log_probs).sum(axis=1, keepdims=True))
    steps, classes = x.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        if collapse(path, blank) == list(labels):
            total += np.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return float(-np.log(total))


@pytest.fixture
def brute_force() -> Callable[[np.ndarray, Sequence[int], int], float]:
    """`brute_force(activations (T, C), labels, blank)`: the CTC cost summed over all alignments."""
    return brute_force_cost


@pytest.fixture
def run(make_layer, blob_of) -> Callable[..., tuple[Layer, list[Blob], list[Blob]]]:
    """`run(text, arrays, phase=TRAIN)`: the layer of `text` set up on blobs of `arrays` and run forward."""
    def forward(text: str, arrays: list[np.ndarray], **kwargs) -> tuple[Layer, list[Blob], list[Blob]]:
        layer = make_layer(text, **kwargs)
        bottom, top = [blob_of(a) for a in arrays], [Blob()]
        layer.setup(bottom, top)
        layer.forward(bottom, top)
        return layer, bottom, top

    return forward
