"""Inputs shared by the RNN and LSTM tests: uniform blobs and (x, cont) sequences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from caffe_core.blob import Blob


def make_uniform_blob(shape: tuple[int, ...], rng: np.random.Generator) -> Blob:
    """A blob of values uniform in [-1, 1]."""
    blob = Blob(shape)
    blob.mutable_cpu_data()[...] = rng.uniform(-1, 1, shape)
    return blob


def make_sequence(timesteps: int, streams: int, first_continuing: int | None = None) -> tuple[Blob, Blob]:
    """x (T, N, 3, 2) uniform in [-1, 1] and cont = (flat index >= first_continuing), by default t > 0."""
    x = make_uniform_blob((timesteps, streams, 3, 2), np.random.default_rng(5))
    cont = Blob((timesteps, streams))
    first = streams if first_continuing is None else first_continuing
    cont.mutable_cpu_data()[...] = (np.arange(timesteps * streams) >= first).reshape(timesteps, streams)
    return x, cont


@pytest.fixture
def uniform_blob() -> Callable[[tuple[int, ...], np.random.Generator], Blob]:
    """`uniform_blob(shape, rng)`: a blob of values uniform in [-1, 1]."""
    return make_uniform_blob


@pytest.fixture
def sequence() -> Callable[..., tuple[Blob, Blob]]:
    """`sequence(T, N, first_continuing=None)`: x (T, N, 3, 2) and its continuation indicators."""
    return make_sequence
