"""Dropout: identity in TEST (golden), inverted dropout in TRAIN, gradient."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def layer_text(ratio: float = 0.5) -> str:
    return f'name: "drop" type: "Dropout" dropout_param {{ dropout_ratio: {ratio} }}'


def test_golden_test_phase(golden_case):
    assert check_layer_case(golden_case("dropout_test")) == []


@pytest.mark.parametrize("ratio", [0.5, 0.3, 0.8])
def test_train_keeps_and_scales_about_one_minus_ratio(make_layer, blob_of, ratio):
    x = np.random.default_rng(1).standard_normal((20, 30)).astype(np.float32)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(ratio))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    y = top.cpu_data()
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] * np.float32(1 / (1 - ratio)), rtol=1e-6)
    std_error = np.sqrt(ratio * (1 - ratio) / x.size)
    assert abs((1 - kept.mean()) - ratio) < 1.96 * std_error


def test_train_mask_follows_the_seed_and_drives_backward(make_layer, blob_of):
    bottom, top = [blob_of(np.ones((4, 5)))], Blob()
    layer = make_layer(layer_text())
    layer.setup(bottom, [top])
    runtime.set_random_seed(3)
    layer.forward(bottom, [top])
    first = top.cpu_data().copy()
    runtime.set_random_seed(3)
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), first)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), first)


def test_test_phase_is_identity_both_ways(make_layer, blob_of):
    x = np.random.default_rng(1).standard_normal((3, 4))
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(0.7), phase=caffe_pb2.TEST)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), x.astype(np.float32))
    top.mutable_cpu_diff()[...] = 2
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), 2)


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(np.random.default_rng(2).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(layer_text()), bottom, [Blob()])


def test_ratio_one_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'drop'.*dropout_ratio"):
        make_layer(layer_text(1.0)).setup([blob_of(np.ones(2))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(), [np.random.default_rng(3).standard_normal((2, 3, 4))])
