"""ReLU: golden numbers (plain and leaky), gradient, in-place use."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

PLAIN = 'name: "relu" type: "ReLU"'
LEAKY = 'name: "relu" type: "ReLU" relu_param { negative_slope: 0.01 }'


@pytest.mark.parametrize("case", ["relu", "relu_leaky"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


@pytest.mark.parametrize(("text", "slope"), [(PLAIN, 0.0), (LEAKY, 0.01)])
def test_forward(make_layer, blob_of, text, slope):
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(text)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_allclose(top.cpu_data(), np.where(x > 0, x, np.float32(slope) * x), rtol=1e-6)


@pytest.mark.parametrize("text", [PLAIN, LEAKY])
def test_gradient(make_layer, blob_of, text):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01).check_gradient_eltwise(make_layer(text), bottom, [Blob()])


def test_in_place(make_layer, blob_of):
    x = np.array([-2.0, -0.5, 0.0, 1.5], dtype=np.float32)
    blob = blob_of(x)
    layer = make_layer(LEAKY)
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    np.testing.assert_allclose(blob.cpu_data(), [-0.02, -0.005, 0.0, 1.5], rtol=1e-6)
    blob.mutable_cpu_diff()[...] = 2
    layer.backward([blob], [True], [blob])
    np.testing.assert_allclose(blob.cpu_diff(), [0.02, 0.02, 0.02, 2.0], rtol=1e-6)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LEAKY, [np.random.default_rng(3).standard_normal((2, 3, 4))])
