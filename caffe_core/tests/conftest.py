"""Shared helpers for caffe_core's tests."""

import pytest

from caffe_core import runtime


@pytest.fixture(autouse=True)
def _cpu_mode_and_seed():
    runtime.set_mode_cpu()
    runtime.set_random_seed(1701)
    yield
    runtime.set_mode_cpu()
