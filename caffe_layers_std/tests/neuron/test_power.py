"""Power: golden numbers, Caffe's special cases, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

# (power, scale, shift): general, shift 0, square, linear, constant (power 0) and zero scale.
CONFIGS = [(0.37, 0.83, 2.4), (1.5, 0.83, 0.0), (2.0, 0.34, -2.4), (1.0, 0.83, -2.4), (0.0, 0.83, -2.4),
           (2.0, 0.0, 1.5)]


def layer_text(power: float, scale: float, shift: float) -> str:
    return f'name: "pow" type: "Power" power_param {{ power: {power} scale: {scale} shift: {shift} }}'


def valid_input(power: float, shift: float, seed: int) -> np.ndarray:
    """Positive inputs when the power is fractional and there is no shift to keep the base positive."""
    x = np.random.default_rng(seed).uniform(-1, 1, (2, 3, 4))
    return np.abs(x) + 0.5 if shift == 0 and power not in (0, 1, 2) else x


def test_golden(golden_case):
    assert check_layer_case(golden_case("power")) == []


@pytest.mark.parametrize(("power", "scale", "shift"), CONFIGS)
def test_forward(make_layer, blob_of, power, scale, shift):
    x = valid_input(power, shift, 1)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(power, scale, shift))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    x32 = x.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(top.cpu_data(), np.power(shift + scale * x32, power), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("power", "scale", "shift"), CONFIGS)
def test_gradient(make_layer, blob_of, power, scale, shift):
    bottom = [blob_of(valid_input(power, shift, 2))]
    layer = make_layer(layer_text(power, scale, shift))
    GradientChecker(1e-3, 1e-2, 1701, 0.0, 0.01).check_gradient_eltwise(layer, bottom, [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(0.37, 0.83, 2.4), [valid_input(0.37, 2.4, 3)])
