"""HardSwish: the fork's golden case, forward against the formula, the true gradient (in place too)."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

TEXT = 'name: "hs" type: "HardSwish"'


def away_from(x: np.ndarray, kinks: list[float], margin: float = 0.05) -> np.ndarray:
    """x with values within `margin` of a kink moved `margin` to the right of it."""
    for kink in kinks:
        x = np.where(np.abs(x - kink) < margin, kink + margin, x)
    return x


def test_golden(golden_case):
    assert check_layer_case(golden_case("hardswish")) == []


def test_forward(make_layer, blob_of):
    random = np.random.default_rng(1).standard_normal(60) * 4
    x = np.concatenate([random, [-3, 3, 0, -6, 6]]).astype(np.float32)
    layer, bottom, top = make_layer(TEXT), blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    expected = x.astype(np.float64) * np.clip(x / 6.0 + 0.5, 0, 1)
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(top.cpu_data()[-5:], [0, 3, 0, 0, 6])


def test_gradient_values(make_layer, blob_of):
    x = np.array([-4, -3, -1.5, 0, 1.5, 3, 4], np.float32)
    layer, bottom, top = make_layer(TEXT), blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 2
    layer.backward([top], [True], [bottom])
    np.testing.assert_allclose(bottom.cpu_diff(), [0, -1, 0, 1, 2, 3, 2], atol=1e-6)


def test_gradient(make_layer, blob_of):
    x = away_from(np.random.default_rng(2).standard_normal((2, 3, 4)) * 3, [-3, 3])
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(TEXT), [blob_of(x)], [Blob()])


def test_in_place_uses_the_input_not_the_output(make_layer, blob_of):
    """y is not monotonic below 0 (y(-1) = y(-2) = -1/3), so in place the layer keeps its input."""
    x = np.array([-2, -1, 1, 5], np.float32)
    separate, bottom, top = make_layer(TEXT), blob_of(x), Blob()
    separate.setup([bottom], [top])
    separate.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    separate.backward([top], [True], [bottom])
    blob = blob_of(x)
    in_place = make_layer(TEXT)
    in_place.setup([blob], [blob])
    in_place.forward([blob], [blob])
    np.testing.assert_array_equal(blob.cpu_data(), top.cpu_data())
    blob.mutable_cpu_diff()[...] = 1
    in_place.backward([blob], [True], [blob])
    np.testing.assert_array_equal(blob.cpu_diff(), bottom.cpu_diff())
    np.testing.assert_allclose(blob.cpu_diff(), [-1 / 6, 1 / 6, 5 / 6, 1], rtol=1e-6)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, [np.random.default_rng(3).standard_normal((2, 3, 4)) * 4])


def test_is_a_neuron_layer_in_place_too(make_layer, gaussian):
    layer = make_layer('name: "n" type: "HardSwish"')
    assert isinstance(layer, NeuronLayer)
    blob = gaussian((2, 3, 4))
    layer.setup([blob], [blob])
    assert blob.shape == (2, 3, 4)
