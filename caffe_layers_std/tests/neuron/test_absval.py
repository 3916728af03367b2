"""AbsVal: golden numbers, gradient, in-place refusal."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "abs" type: "AbsVal"'


def test_golden(golden_case):
    assert check_layer_case(golden_case("absval")) == []


def test_forward_is_the_absolute_value(make_layer, blob_of):
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    layer, top = make_layer(LAYER), Blob()
    bottom = [blob_of(x)]
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), np.abs(x.astype(np.float32)))


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01).check_gradient_eltwise(make_layer(LAYER), bottom, [Blob()])


def test_in_place_is_refused(make_layer, blob_of):
    blob = blob_of(np.ones(3))
    with pytest.raises(LayerSetupError, match="'abs'.*in-place"):
        make_layer(LAYER).setup([blob], [blob])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
