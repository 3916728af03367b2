"""Exp: golden numbers, base/scale/shift, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

CONFIGS = [(-1, 1, 0), (2, 1, 0), (2, 1, 1), (2, 3, 0), (2, 3, 1)]


def layer_text(base: float, scale: float, shift: float) -> str:
    return f'name: "exp" type: "Exp" exp_param {{ base: {base} scale: {scale} shift: {shift} }}'


def test_golden(golden_case):
    assert check_layer_case(golden_case("exp")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("exp") == []


@pytest.mark.parametrize(("base", "scale", "shift"), CONFIGS)
def test_forward(make_layer, blob_of, base, scale, shift):
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float64)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(base, scale, shift))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    x32 = x.astype(np.float32).astype(np.float64)
    expected = np.exp(shift + scale * x32) if base == -1 else np.power(base, shift + scale * x32)
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-5)


@pytest.mark.parametrize(("base", "scale", "shift"), CONFIGS)
def test_gradient(make_layer, blob_of, base, scale, shift):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4)))]
    layer = make_layer(layer_text(base, scale, shift))
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(layer, bottom, [Blob()])


def test_non_positive_base_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'exp'.*base must be strictly positive"):
        make_layer(layer_text(0, 1, 0)).setup([blob_of(np.ones(2))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(2, 3, 1), [np.random.default_rng(3).standard_normal((2, 3, 4))])
