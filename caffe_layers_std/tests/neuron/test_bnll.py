"""BNLL: golden numbers, stability, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "bnll" type: "BNLL"'


def test_golden(golden_case):
    assert check_layer_case(golden_case("bnll")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("bnll") == []


def test_large_inputs_do_not_overflow(make_layer, blob_of):
    bottom, top = [blob_of([-200.0, 0.0, 200.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_allclose(top.cpu_data(), [0.0, np.log(2.0), 200.0], rtol=1e-6)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), [0.0, 0.5, 1.0], atol=1e-7)


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(LAYER), bottom, [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
