"""ELU: golden numbers, alpha, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "elu" type: "ELU" elu_param { alpha: 0.5 }'


def test_golden(golden_case):
    assert check_layer_case(golden_case("elu")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("elu") == []


def test_forward_with_alpha(make_layer, blob_of):
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_allclose(top.cpu_data(), np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-5, atol=1e-7)


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01).check_gradient_eltwise(make_layer(LAYER), bottom, [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
