"""Log: golden numbers, base/scale/shift, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

CONFIGS = [(-1, 1, 0), (2, 1, 0), (2, 1, 1), (2, 3, 0), (2, 3, 1)]


def layer_text(base: float, scale: float, shift: float) -> str:
    return f'name: "log" type: "Log" log_param {{ base: {base} scale: {scale} shift: {shift} }}'


def positive_input(seed: int) -> np.ndarray:
    """Caffe's Log tests feed exp(gaussian)."""
    return np.exp(np.random.default_rng(seed).standard_normal((2, 3, 4)))


def test_golden(golden_case):
    assert check_layer_case(golden_case("log")) == []


@pytest.mark.parametrize(("base", "scale", "shift"), CONFIGS)
def test_forward(make_layer, blob_of, base, scale, shift):
    x = positive_input(1)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(base, scale, shift))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    x32 = x.astype(np.float32).astype(np.float64)
    expected = np.log(shift + scale * x32) / (1.0 if base == -1 else np.log(base))
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("base", "scale", "shift"), CONFIGS)
def test_gradient(make_layer, blob_of, base, scale, shift):
    layer = make_layer(layer_text(base, scale, shift))
    GradientChecker(1e-2, 1e-2).check_gradient_eltwise(layer, [blob_of(positive_input(2))], [Blob()])


def test_negative_base_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'log'.*base must be strictly positive"):
        make_layer(layer_text(-2, 1, 0)).setup([blob_of(np.ones(2))], [Blob()])


def test_base_one_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'log'.*log_param.base must not be 1"):
        make_layer(layer_text(1, 1, 0)).setup([blob_of(np.ones(2))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(2, 3, 1), [positive_input(3)])
