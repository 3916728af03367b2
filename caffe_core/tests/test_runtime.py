"""The mode switch: CPU by default, GPU mode only with cupy and a device."""

import importlib.util

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.device import GPU
from caffe_core.errors import DeviceError

has_cupy = importlib.util.find_spec("cupy") is not None


@pytest.mark.cpu_mode
def test_cpu_is_the_default_mode():
    assert runtime.mode() == runtime.CPU_MODE


@pytest.mark.skipif(has_cupy, reason="cupy is installed; the failure path needs its absence")
def test_gpu_mode_without_cupy_fails_clearly(without_gpu):
    with pytest.raises(DeviceError, match="cupy.*CAFFE_GPU_STANDIN=1"):
        runtime.set_mode_gpu()
    assert runtime.mode() == runtime.CPU_MODE


def test_negative_device_is_refused():
    with pytest.raises(DeviceError, match=">= 0"):
        runtime.set_device(-1)


def test_seed_makes_draws_repeatable():
    runtime.set_random_seed(5)
    first = runtime.rng().uniform(3, 0, 1)
    runtime.set_random_seed(5)
    np.testing.assert_array_equal(first, runtime.rng().uniform(3, 0, 1))


@pytest.mark.gpu
def test_blob_round_trips_through_the_gpu(gpu_mode):
    blob = Blob((2, 3))
    blob.mutable_cpu_data()[...] = np.arange(6).reshape(2, 3)
    assert isinstance(blob.gpu_data(), GPU.xp.ndarray)
    blob.mutable_gpu_data()[...] *= 2
    np.testing.assert_array_equal(blob.cpu_data(), 2 * np.arange(6).reshape(2, 3))
