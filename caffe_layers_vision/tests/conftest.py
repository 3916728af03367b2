"""Shared helpers for caffe_layers_vision's tests: layers from text, blobs from arrays, golden cases."""

from __future__ import annotations

import os

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.testing.layers import blob_from, build_layer

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")


@pytest.fixture(autouse=True)
def _cpu_mode_and_seed():
    runtime.set_mode_cpu()
    runtime.set_random_seed(1701)
    yield
    runtime.set_mode_cpu()


def gaussian_blob(shape: tuple[int, ...], seed: int = 1701, std: float = 1.0) -> Blob:
    """A blob of Gaussian values, as Caffe's test fixtures fill their bottoms."""
    return blob_from(np.random.default_rng(seed).normal(0.0, std, shape))


def golden_path(case: str) -> str:
    """The folder of a golden case copied under tests/golden."""
    return os.path.join(GOLDEN_DIR, case)


@pytest.fixture
def make_layer():
    """`make_layer(text, phase=TRAIN)`: a layer built from LayerParameter text through the registry."""
    return build_layer


@pytest.fixture
def blob_of():
    """`blob_of(array)`: a float32 blob holding the array."""
    return blob_from


@pytest.fixture
def gaussian():
    """`gaussian(shape, seed=1701, std=1.0)`: a blob of Gaussian values."""
    return gaussian_blob


@pytest.fixture
def golden_case():
    """`golden_case(name)`: the path of tests/golden/<name>."""
    return golden_path
