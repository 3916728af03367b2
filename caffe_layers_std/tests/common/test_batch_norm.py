"""BatchNorm: golden numbers, batch statistics, running averages, forced lr_mult 0, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "bn" type: "BatchNorm"'
GLOBAL = 'name: "bn" type: "BatchNorm" batch_norm_param { use_global_stats: true }'


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def run(layer, x):
    bottom, top = [x if isinstance(x, Blob) else Blob(np.shape(x))], Blob()
    if not isinstance(x, Blob):
        bottom[0].mutable_cpu_data()[...] = x
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    return bottom, top


def test_golden(golden_case):
    assert check_layer_case(golden_case("batchnorm")) == []


def test_train_normalises_each_channel(make_layer):
    _, top = run(make_layer(LAYER), 3 * gaussian((5, 2, 3, 4)) + 2)
    y = top.cpu_data().astype(np.float64)
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), 0, atol=1e-5)
    np.testing.assert_allclose((y ** 2).mean(axis=(0, 2, 3)), 1, atol=1e-3)


@pytest.mark.parametrize("eps", [1e-5, 0.5, 3.0])
def test_eps_is_added_to_the_variance(make_layer, eps):
    # Caffe's BatchNorm: y = (x - mean) / sqrt(var + eps), mean and (biased) var per channel over N, H, W.
    x = 3 * gaussian((4, 2, 3, 3)) + 1
    _, top = run(make_layer(f'name: "bn" type: "BatchNorm" batch_norm_param {{ eps: {eps} }}'), x)
    x32 = x.astype(np.float32).astype(np.float64)
    mean = x32.mean(axis=(0, 2, 3), keepdims=True)
    var = ((x32 - mean) ** 2).mean(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(top.cpu_data(), (x32 - mean) / np.sqrt(var + np.float32(eps)), rtol=2e-5,
                               atol=2e-6)


def test_running_statistics_follow_caffe_update(make_layer):
    layer = make_layer(LAYER + ' batch_norm_param { moving_average_fraction: 0.9 }')
    first, second = gaussian((4, 2, 3)), gaussian((4, 2, 3), 2) + 1
    bottom, top = run(layer, first)
    bottom[0].mutable_cpu_data()[...] = second
    layer.forward(bottom, [top])
    m = 4 * 3
    batches = [x.astype(np.float32).astype(np.float64) for x in (first, second)]
    means = [x.mean(axis=(0, 2)) for x in batches]
    variances = [x.var(axis=(0, 2)) * m / (m - 1) for x in batches]
    np.testing.assert_allclose(layer.blobs[0].cpu_data(), 0.9 * means[0] + means[1], rtol=1e-5)
    np.testing.assert_allclose(layer.blobs[1].cpu_data(), 0.9 * variances[0] + variances[1], rtol=1e-5)
    np.testing.assert_allclose(layer.blobs[2].cpu_data(), [1.9], rtol=1e-6)


@pytest.mark.parametrize(("factor", "divisor"), [(2.0, 2.0), (0.0, None)])
def test_global_statistics_are_divided_by_the_scale_factor(make_layer, factor, divisor):
    x = gaussian((2, 3, 4))
    mean, variance = np.array([1.0, -2.0, 0.5]), np.array([4.0, 0.25, 1.0])
    layer = make_layer(GLOBAL)
    layer.blobs = [Blob((3,)), Blob((3,)), Blob((1,))]
    for blob, value in zip(layer.blobs, (mean, variance, [factor]), strict=True):
        blob.mutable_cpu_data()[...] = value
    _, top = run(layer, x)
    used_mean, used_var = (mean / divisor, variance / divisor) if divisor else (0 * mean, 0 * variance)
    expected = (x - used_mean.reshape(1, 3, 1)) / np.sqrt(used_var.reshape(1, 3, 1) + 1e-5)
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-4, atol=1e-5)


def test_test_phase_uses_global_statistics_by_default(make_layer):
    layer = make_layer(LAYER, phase=caffe_pb2.TEST)
    run(layer, gaussian((2, 3)))
    assert layer.use_global_stats
    np.testing.assert_array_equal(layer.blobs[2].cpu_data(), [0.0])


def test_statistics_get_lr_mult_zero(make_layer):
    layer = make_layer(LAYER + ' param { lr_mult: 0 }')
    run(layer, gaussian((2, 3)))
    assert [spec.lr_mult for spec in layer.layer_param.param] == [0.0, 0.0, 0.0]


def test_learned_statistics_are_refused(make_layer):
    with pytest.raises(LayerSetupError, match="'bn'.*cannot be configured as learned"):
        run(make_layer(LAYER + ' param { lr_mult: 0 } param { lr_mult: 1 }'), gaussian((2, 3)))


def test_in_place_matches_out_of_place(make_layer):
    x, dy = gaussian((3, 2, 4)), gaussian((3, 2, 4), 2).astype(np.float32)
    results = []
    for in_place in (False, True):
        bottom = Blob(x.shape)
        bottom.mutable_cpu_data()[...] = x
        top = bottom if in_place else Blob()
        layer = make_layer(LAYER)
        layer.setup([bottom], [top])
        layer.forward([bottom], [top])
        y = top.cpu_data().copy()
        top.mutable_cpu_diff()[...] = dy
        layer.backward([top], [True], [bottom])
        results.append((y, bottom.cpu_diff().copy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(gaussian((5, 2, 2, 3)))]
    GradientChecker(1e-2, 1e-4).check_gradient_exhaustive(make_layer(LAYER), bottom, [Blob()])


def test_global_statistics_backward_divides_by_the_std(make_layer):
    # The statistics move the output but Caffe never writes their diffs, so this is checked by hand.
    layer = make_layer(GLOBAL)
    layer.blobs = [Blob((2,)), Blob((2,)), Blob((1,))]
    for blob, value in zip(layer.blobs, ([0.3, -0.2], [2.0, 0.5], [1.0]), strict=True):
        blob.mutable_cpu_data()[...] = value
    bottom, top = run(layer, gaussian((3, 2, 4)))
    dy = gaussian((3, 2, 4), 2).astype(np.float32)
    top.mutable_cpu_diff()[...] = dy
    layer.backward([top], [True], bottom)
    std = np.sqrt(np.array([2.0, 0.5]) + 1e-5).reshape(1, 2, 1)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dy / std, rtol=1e-5)
    for blob in layer.blobs:
        np.testing.assert_array_equal(blob.cpu_diff(), 0)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [gaussian((4, 3, 5))], rtol=1e-4, atol=1e-5)
