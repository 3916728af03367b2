"""BatchNormKyle: the golden case, batch and stored statistics (with and without alpha / beta) against
references, the moving averages, gradients, the stored-statistics backward, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def bnk_text(params: str = "") -> str:
    """A BatchNormKyle layer with this batch_norm_param text."""
    return f"name: 'k' type: 'BatchNormKyle' bottom: 'x' top: 'y' batch_norm_param {{ {params} }}"


def run(run_layer, bottom, params="", phase=caffe_pb2.TRAIN, setup=None):
    """The layer and its top after setup (then setup(layer)) and forward."""
    return run_layer(bnk_text(params), [bottom], phase, setup)


def per(values):
    """Per-channel values shaped to broadcast over (N, C, H, W)."""
    return np.asarray(values, np.float64)[:, None, None]


def alpha_beta(layer):
    """Non-trivial alpha and beta."""
    layer.blobs[3].mutable_cpu_data()[...] = [0.5, 2.0, -1.0]
    layer.blobs[4].mutable_cpu_data()[...] = [0.1, 0.2, 0.3]


def test_golden(golden_case):
    assert check_layer_case(golden_case("batchnormkyle_plain_test_inplace")) == []


def test_blobs(run_layer, gaussian):
    plain, _ = run(run_layer, gaussian((2, 3, 2, 2)))
    assert [b.shape for b in plain.blobs] == [(3,), (3,), (1,)]
    with_ab, _ = run(run_layer, gaussian((2, 3, 2, 2)), "use_alpha_beta: true")
    assert [b.shape for b in with_ab.blobs] == [(3,), (3,), (1,), (3,), (3,)]
    assert with_ab.blobs[3].cpu_data().tolist() == [1, 1, 1] and not with_ab.blobs[4].cpu_data().any()


def test_train_forward_and_moving_averages(run_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    layer, top = run(run_layer, bottom, "use_alpha_beta: true moving_average_fraction: 0.5 eps: 0.01",
                     setup=alpha_beta)
    x = bottom.cpu_data().astype(np.float64)
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    want = (x - per(mean)) / np.sqrt(per(var) + 0.01) * per([0.5, 2, -1]) + per([0.1, 0.2, 0.3])
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(layer.blobs[0].cpu_data(), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.blobs[1].cpu_data(), var * 40 / 39, rtol=1e-5)
    assert layer.blobs[2].cpu_data().tolist() == [1]


def test_stored_statistics_are_scaled_by_the_factor(run_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))

    def stored(layer):
        layer.blobs[0].mutable_cpu_data()[...] = [1, 2, 3]
        layer.blobs[1].mutable_cpu_data()[...] = [2, 4, 8]
        layer.blobs[2].mutable_cpu_data()[...] = 2
        alpha_beta(layer)

    _, top = run(run_layer, bottom, "use_alpha_beta: true eps: 0", caffe_pb2.TEST, stored)
    want = (bottom.cpu_data() - per([0.5, 1, 1.5])) / np.sqrt(per([1, 2, 4])) * per([0.5, 2, -1]) \
        + per([0.1, 0.2, 0.3])
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-5, atol=1e-6)


def test_zero_factor_means_zero_statistics(run_layer, gaussian):
    bottom = gaussian((1, 3, 2, 2))
    _, top = run(run_layer, bottom, "eps: 0.25", caffe_pb2.TEST)
    np.testing.assert_allclose(top.cpu_data(), bottom.cpu_data() / 0.5, rtol=1e-6)


@pytest.mark.parametrize("params", ["", "use_alpha_beta: true"])
def test_gradient_with_batch_statistics(make_layer, gaussian, params):
    """BVLC's BatchNorm checker (1e-2, 1e-4); with alpha and beta their gradients too."""
    layer = make_layer(bnk_text(params))
    GradientChecker(1e-2, 1e-4).check_gradient_exhaustive(layer, [gaussian((3, 2, 2, 3))], [Blob()])


def test_stored_statistics_backward_and_no_alpha_beta_gradient(run_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))

    def stored(layer):
        layer.blobs[1].mutable_cpu_data()[...] = [1, 4, 9]
        layer.blobs[2].mutable_cpu_data()[...] = 1
        alpha_beta(layer)

    layer, top = run(run_layer, bottom, "use_alpha_beta: true eps: 0", caffe_pb2.TEST, stored)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    np.testing.assert_allclose(bottom.cpu_diff(), np.broadcast_to(per([0.5, 1, -1 / 3]), (2, 3, 2, 2)),
                               rtol=1e-6)
    assert not layer.blobs[3].cpu_diff().any() and not layer.blobs[4].cpu_diff().any()


def test_alpha_beta_diffs_accumulate(run_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))
    layer, top = run(run_layer, bottom, "use_alpha_beta: true")
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    layer.backward([top], [True], [bottom])
    np.testing.assert_allclose(layer.blobs[4].cpu_diff(), 16)


def test_refuses_a_wrong_blob_count(make_layer, gaussian):
    layer = make_layer(bnk_text("use_alpha_beta: true"))
    layer.blobs = [Blob((2,)), Blob((2,)), Blob((1,))]
    with pytest.raises(LayerSetupError, match="expects 5 blobs with batch_norm_param.use_alpha_beta true"):
        layer.setup([gaussian((1, 2, 2, 2))], [Blob()])


def test_refuses_a_channel_change(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((1, 2, 2, 2)))
    with pytest.raises(LayerSetupError, match="bottom has 3 channels"):
        layer.reshape([gaussian((1, 3, 2, 2))], [top])


@pytest.mark.gpu
@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, phase):
    gpu_matches_cpu(bnk_text("use_alpha_beta: true"), [gaussian((2, 3, 4, 5)).cpu_data()], phase=phase,
                    rtol=1e-4, atol=1e-5)
