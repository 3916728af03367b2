"""ReLU6: the fork's golden case, forward for each parameter, the fork's gradient (0 at both kinks)."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

CONFIGS = [("", 0.0, 6.0), ("relu6_param { negative_slope: 0.1 }", 0.1, 6.0),
           ("relu6_param { threshold: 2.5 }", 0.0, 2.5),
           ("relu6_param { negative_slope: 0.2 threshold: 1 }", 0.2, 1.0)]


def text(params: str) -> str:
    """A ReLU6 layer with these parameters."""
    return f'name: "r" type: "ReLU6" {params}'


def away_from(x: np.ndarray, kinks: list[float], margin: float = 0.05) -> np.ndarray:
    """x with values within `margin` of a kink moved `margin` to the right of it."""
    for kink in kinks:
        x = np.where(np.abs(x - kink) < margin, kink + margin, x)
    return x


def run(make_layer, blob_of, params, x):
    """The layer, its bottom and its top after setup and forward on x."""
    layer = make_layer(text(params))
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    return layer, bottom, top


def test_golden(golden_case):
    assert check_layer_case(golden_case("relu6_default")) == []


@pytest.mark.parametrize(("params", "slope", "threshold"), CONFIGS)
def test_forward(make_layer, blob_of, params, slope, threshold):
    x = (np.random.default_rng(1).standard_normal((2, 3, 4, 5)) * 4).astype(np.float32)
    _, _, top = run(make_layer, blob_of, params, x)
    expected = np.minimum(np.where(x > 0, x, np.float32(slope) * x), np.float32(threshold))
    np.testing.assert_array_equal(top.cpu_data(), expected)


def test_values_and_gradient_at_the_kinks(make_layer, blob_of):
    x = np.array([-2, 0, 3, 6, 7], np.float32)
    layer, bottom, top = run(make_layer, blob_of, "relu6_param { negative_slope: 0.5 }", x)
    np.testing.assert_array_equal(top.cpu_data(), [-1, 0, 3, 6, 6])
    top.mutable_cpu_diff()[...] = 2
    layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), [1, 1, 2, 0, 0])


@pytest.mark.parametrize(("params", "slope", "threshold"), CONFIGS)
def test_gradient(make_layer, blob_of, params, slope, threshold):
    x = away_from(np.random.default_rng(2).standard_normal((2, 3, 4)) * 4, [threshold])
    checker = GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01)
    checker.check_gradient_eltwise(make_layer(text(params)), [blob_of(x)], [Blob()])


def test_in_place(make_layer, blob_of):
    x = np.array([-2, 1, 7], np.float32)
    blob = blob_of(x)
    layer = make_layer(text("relu6_param { negative_slope: 0.1 }"))
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    np.testing.assert_allclose(blob.cpu_data(), [-0.2, 1, 6], rtol=1e-6)
    blob.mutable_cpu_diff()[...] = 1
    layer.backward([blob], [True], [blob])
    np.testing.assert_allclose(blob.cpu_diff(), [0.1, 1, 0], rtol=1e-6)


def test_no_propagate_down_leaves_the_diff(make_layer, blob_of):
    layer, bottom, top = run(make_layer, blob_of, "", np.array([1.0, 2.0]))
    bottom.mutable_cpu_diff()[...] = 5
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [False], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), [5, 5])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(3).standard_normal((2, 3, 4)) * 4
    gpu_matches_cpu(text("relu6_param { negative_slope: 0.1 threshold: 3 }"), [x])


def test_is_a_neuron_layer_in_place_too(make_layer, gaussian):
    layer = make_layer('name: "n" type: "ReLU6"')
    assert isinstance(layer, NeuronLayer)
    blob = gaussian((2, 3, 4))
    layer.setup([blob], [blob])
    assert blob.shape == (2, 3, 4)
