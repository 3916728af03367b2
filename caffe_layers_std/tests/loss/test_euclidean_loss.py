"""EuclideanLoss: golden case, forward against numpy, gradient to both bottoms."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "l" type: "EuclideanLoss"'


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("euclideanloss")) == []


def test_forward_and_backward(run_forward):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((10, 5, 1, 1)), rng.standard_normal((10, 5))
    layer, bottoms, tops = run_forward(f"{LAYER} loss_weight: 2", [a, b])
    diff = a.reshape(10, 5) - b
    np.testing.assert_allclose(float(tops[0].cpu_data()), (diff ** 2).sum() / 20, rtol=1e-5)
    layer.backward(tops, [True, True], bottoms)
    np.testing.assert_allclose(bottoms[0].cpu_diff().reshape(10, 5), 2 * diff / 10, rtol=1e-5)
    np.testing.assert_allclose(bottoms[1].cpu_diff(), -2 * diff / 10, rtol=1e-5)


def test_backward_scale_is_rounded_as_caffe(run_forward):
    # Caffe's alpha is sign * weight / num in float; weight * float(1 / num) is an ulp off for this weight.
    a, b = np.ones((3, 2), np.float32), np.zeros((3, 2), np.float32)
    weight = np.float32(0.12573022)
    layer, bottoms, tops = run_forward(LAYER, [a, b])
    tops[0].mutable_cpu_diff()[...] = weight
    layer.backward(tops, [True, True], bottoms)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), weight / np.float32(3))
    np.testing.assert_array_equal(bottoms[1].cpu_diff(), -weight / np.float32(3))


def test_gradient(make_layer, blob_of):
    rng = np.random.default_rng(1701)
    a, b = rng.standard_normal((5, 3, 1, 1)), rng.standard_normal((5, 3, 1, 1))
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(
        make_layer(f"{LAYER} loss_weight: 3.7"), [blob_of(a), blob_of(b)], [Blob()])


def test_force_backward_reaches_both_bottoms(make_layer):
    layer = make_layer(LAYER)
    assert layer.allow_force_backward(0) and layer.allow_force_backward(1)


def test_sizes_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="same dimension"):
        make_layer(LAYER).setup([blob_of(np.zeros((2, 3))), blob_of(np.zeros((2, 4)))], [Blob()])
