"""Sigmoid: golden numbers, saturation, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "sig" type: "Sigmoid"'


def test_golden(golden_case):
    assert check_layer_case(golden_case("sigmoid")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("sigmoid") == []


def test_forward_saturates_without_overflow(make_layer, blob_of):
    bottom, top = [blob_of([-1000.0, 0.0, 1000.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), [0.0, 0.5, 1.0])


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01).check_gradient_eltwise(make_layer(LAYER), bottom, [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
