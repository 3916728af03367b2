"""TanH: golden numbers, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "tanh" type: "TanH"'


def test_golden(golden_case):
    assert check_layer_case(golden_case("tanh")) == []


def test_forward_saturates(make_layer, blob_of):
    bottom, top = [blob_of([-50.0, 0.0, 50.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), [-1.0, 0.0, 1.0])


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(LAYER), bottom, [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
