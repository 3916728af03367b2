"""Bit-exact comparisons: exact on the CPU and the stand-in, DEVICE_ULPS ulps of the largest value on CUDA."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.device import STANDIN_SWITCH
from caffe_core.testing import exactness

ONE_ULP_ABOVE_2 = np.nextafter(np.float32(2), np.float32(3))
EPS = float(np.finfo(np.float32).eps)


@pytest.fixture
def cuda_mode(monkeypatch):
    """What a real device looks like to the helpers: GPU mode with the stand-in switched off."""
    monkeypatch.setattr(runtime, "mode", lambda: runtime.GPU_MODE)
    monkeypatch.delenv(STANDIN_SWITCH, raising=False)


@pytest.mark.cpu_mode
def test_on_the_cpu_one_ulp_is_a_mismatch():
    assert exactness.device_tolerance() == 0.0
    exactness.assert_caffe_equal(np.float32([1, 2]), np.float32([1, 2]))
    with pytest.raises(AssertionError):
        exactness.assert_caffe_equal(np.float32([1, ONE_ULP_ABOVE_2]), np.float32([1, 2]))


def test_on_the_standin_one_ulp_is_a_mismatch(gpu_standin):
    assert not exactness.on_cuda_device()
    with pytest.raises(AssertionError):
        exactness.assert_caffe_equal(np.float32([ONE_ULP_ABOVE_2]), np.float32([2]))


def test_on_a_cuda_device_a_few_ulps_of_the_largest_value_pass(cuda_mode):
    assert exactness.on_cuda_device()
    assert exactness.device_tolerance() == 4 * EPS
    # 4 ulps of 8 (32 * eps) allowed anywhere, also on the small value
    exactness.assert_caffe_equal(np.float32([8, 0.5 + 30 * EPS]), np.float32([8, 0.5]))
    with pytest.raises(AssertionError):
        exactness.assert_caffe_equal(np.float32([8, 0.5 + 40 * EPS]), np.float32([8, 0.5]))
