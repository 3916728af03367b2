"""Threshold: golden numbers, the step, no backward."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "step" type: "Threshold" threshold_param { threshold: 0.5 }'


def test_golden(golden_case):
    assert check_layer_case(golden_case("threshold")) == []


def test_forward_is_a_strict_step(make_layer, blob_of):
    bottom, top = [blob_of([-1.0, 0.5, 0.50001, 3.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), [0.0, 0.0, 1.0, 1.0])


def test_backward_is_refused(make_layer, blob_of):
    bottom, top = [blob_of([1.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    assert not layer.allow_force_backward(0)
    layer.backward([top], [False], bottom)
    with pytest.raises(LayerSetupError, match="'step'.*cannot back-propagate"):
        layer.backward([top], [True], bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))], propagate_down=[False])
