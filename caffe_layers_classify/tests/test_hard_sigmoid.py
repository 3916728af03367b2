"""HardSigmoid: the fork's golden case, forward for alpha and beta, the true gradient (in place too)."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

CONFIGS = [("", 0.2, 0.5), ("hardsigmoid_param { alpha: 0.1666667 }", 0.1666667, 0.5),
           ("hardsigmoid_param { alpha: -0.5 beta: 0.25 }", -0.5, 0.25)]


def text(params: str) -> str:
    """A HardSigmoid layer with these parameters."""
    return f'name: "hsig" type: "HardSigmoid" {params}'


def away_from_kinks(x: np.ndarray, alpha: float, beta: float, margin: float = 0.05) -> np.ndarray:
    """x with values within `margin` of a kink (alpha x + beta = 0 or 1) moved `margin` to its right."""
    for kink in (-beta / alpha, (1 - beta) / alpha):
        x = np.where(np.abs(x - kink) < margin, kink + margin, x)
    return x


def test_golden(golden_case):
    assert check_layer_case(golden_case("hardsigmoid_default")) == []


@pytest.mark.parametrize(("params", "alpha", "beta"), CONFIGS)
def test_forward(make_layer, blob_of, params, alpha, beta):
    x = (np.random.default_rng(1).standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)
    layer, bottom, top = make_layer(text(params)), blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    expected = np.clip(x * np.float32(alpha) + np.float32(beta), 0, 1)
    np.testing.assert_array_equal(top.cpu_data(), expected)


@pytest.mark.parametrize(("params", "alpha", "beta"), CONFIGS)
def test_gradient(make_layer, blob_of, params, alpha, beta):
    x = away_from_kinks(np.random.default_rng(2).standard_normal((2, 3, 4)) * 4, alpha, beta)
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(text(params)), [blob_of(x)], [Blob()])


def test_in_place(make_layer, blob_of):
    blob = blob_of([-5, -1, 0, 1, 5])
    layer = make_layer(text(""))
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    np.testing.assert_allclose(blob.cpu_data(), [0, 0.3, 0.5, 0.7, 1], rtol=1e-6)
    blob.mutable_cpu_diff()[...] = 3
    layer.backward([blob], [True], [blob])
    np.testing.assert_allclose(blob.cpu_diff(), [0, 0.6, 0.6, 0.6, 0], rtol=1e-6)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(text("hardsigmoid_param { alpha: 0.3 beta: 0.4 }"),
                    [np.random.default_rng(3).standard_normal((2, 3, 4)) * 4])


def test_is_a_neuron_layer_in_place_too(make_layer, gaussian):
    layer = make_layer('name: "n" type: "HardSigmoid"')
    assert isinstance(layer, NeuronLayer)
    blob = gaussian((2, 3, 4))
    layer.setup([blob], [blob])
    assert blob.shape == (2, 3, 4)
