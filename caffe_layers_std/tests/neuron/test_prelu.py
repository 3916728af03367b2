"""PReLU: golden numbers, slopes, gradient, in-place use, accumulation."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "prelu" type: "PReLU" prelu_param { filler { type: "gaussian" } }'
SHARED = 'name: "prelu" type: "PReLU" prelu_param { channel_shared: true filler { type: "gaussian" } }'


def test_golden(golden_case):
    assert check_layer_case(golden_case("prelu")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("prelu") == []


def test_default_slopes_are_a_quarter_per_channel(make_layer, blob_of):
    layer = make_layer('name: "prelu" type: "PReLU"')
    layer.setup([blob_of(np.zeros((2, 3, 4)))], [Blob()])
    assert layer.blobs[0].shape == (3,)
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), 0.25)


def test_shared_slope_is_a_scalar_blob(make_layer, blob_of):
    layer = make_layer(SHARED)
    layer.setup([blob_of(np.zeros((2, 3, 4)))], [Blob()])
    assert layer.blobs[0].shape == ()
    assert layer.blobs[0].count == 1


@pytest.mark.parametrize("text", [LAYER, SHARED])
def test_forward_uses_the_channel_slope(make_layer, blob_of, text):
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(text)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    slope = layer.blobs[0].cpu_data().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(top.cpu_data(), np.maximum(x, 0) + slope * np.minimum(x, 0), rtol=1e-6)


@pytest.mark.parametrize("text", [LAYER, SHARED])
def test_gradient(make_layer, blob_of, text):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 2, 3)))]
    GradientChecker(1e-2, 1e-3, 1701, 0.0, 0.01).check_gradient_exhaustive(make_layer(text), bottom, [Blob()])


def test_in_place_matches_out_of_place(make_layer, blob_of):
    x = np.random.default_rng(4).standard_normal((2, 3, 4))
    dy = np.random.default_rng(5).standard_normal((2, 3, 4)).astype(np.float32)
    results = []
    for in_place in (False, True):
        runtime.set_random_seed(11)
        layer = make_layer(LAYER)
        bottom = blob_of(x)
        top = bottom if in_place else Blob()
        layer.setup([bottom], [top])
        layer.forward([bottom], [top])
        y = top.cpu_data().copy()
        top.mutable_cpu_diff()[...] = dy
        layer.backward([top], [True], [bottom])
        results.append((y, bottom.cpu_diff().copy(), layer.blobs[0].cpu_diff().copy()))
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_array_equal(got, want)


def test_slope_diff_accumulates(make_layer, blob_of):
    bottom, top = [blob_of(-np.ones((1, 2, 3)))], Blob()
    layer = make_layer(LAYER)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(layer.blobs[0].cpu_diff(), [-6.0, -6.0])


def test_wrong_slope_count_is_refused(make_layer, blob_of):
    layer = make_layer('name: "prelu" type: "PReLU" blobs { shape { dim: 2 } data: 1 data: 1 }')
    with pytest.raises(LayerSetupError, match="'prelu'.*slope blob holds 2 values"):
        layer.setup([blob_of(np.zeros((2, 3, 4)))], [Blob()])


def test_one_axis_bottom_is_refused(make_layer, blob_of):
    """Caffe's CHECK_GE(bottom[0]->num_axes(), 2): PReLU needs a channel axis."""
    with pytest.raises(LayerSetupError, match=r"'prelu'.*at least 2 axes.*\(3,\)"):
        make_layer('name: "prelu" type: "PReLU"').setup([blob_of(np.zeros(3))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(3).standard_normal((2, 3, 4))])
