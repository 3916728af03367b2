"""Clip: golden numbers, bounds, gradient, required min/max."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "clip" type: "Clip" clip_param { min: -1 max: 2 }'


def away_from_bounds(x: np.ndarray) -> np.ndarray:
    """Moves values off the kinks at -1 and 2, where finite differences straddle the corner."""
    for bound in (-1.0, 2.0):
        x = np.where(np.abs(x - bound) < 0.05, x + 0.1, x)
    return x


def test_golden(golden_case):
    assert check_layer_case(golden_case("clip")) == []


def test_forward_and_backward_respect_the_bounds(make_layer, blob_of):
    bottom, top = [blob_of([-3.0, -1.0, 0.5, 2.0, 5.0])], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), [-1.0, -1.0, 0.5, 2.0, 2.0])
    top.mutable_cpu_diff()[...] = 3
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), [0.0, 3.0, 3.0, 3.0, 0.0])


def test_gradient(make_layer, blob_of):
    x = away_from_bounds(2 * np.random.default_rng(2).standard_normal((2, 3, 4, 5)))
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(LAYER), [blob_of(x)], [Blob()])


@pytest.mark.parametrize("param", ["", "clip_param { min: 0 }", "clip_param { max: 1 }"])
def test_min_and_max_are_required(make_layer, blob_of, param):
    with pytest.raises(LayerSetupError, match="'clip'.*needs both min and max"):
        make_layer(f'name: "clip" type: "Clip" {param}').setup([blob_of(np.ones(2))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [2 * np.random.default_rng(3).standard_normal((2, 3, 4))])
