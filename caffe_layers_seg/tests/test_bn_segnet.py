"""BN[segnet]: LEARN (batch statistics in every phase, mean and variance tops) and INFERENCE forwards
against references, gradients in both modes, accumulation, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_layers_seg.bn_segnet import SegNetBNLayer

FILLERS = "scale_filler { type: 'constant' value: 1 } shift_filler { type: 'constant' value: 0 }"


def bn_text(mode: str = "LEARN", tops: int = 1) -> str:
    """A SegNet BN layer named 'bn' (unit scale, zero shift) with this bn_mode and number of tops."""
    top_text = " ".join(f"top: 't{i}'" for i in range(tops))
    return f"name: 'bn' type: 'BN' bottom: 'x' {top_text} bn_param {{ {FILLERS} bn_mode: {mode} }}"


def run(make_layer, bottom, mode="LEARN", tops=1, phase=caffe_pb2.TRAIN, scale=None, shift=None):
    """A SegNet BN layer set up (with this scale and shift) and run forward."""
    layer = make_layer(bn_text(mode, tops), phase)
    top = [Blob() for _ in range(tops)]
    layer.setup([bottom], top)
    for blob, values in ((layer.blobs[0], scale), (layer.blobs[1], shift)):
        if values is not None:
            blob.mutable_cpu_data()[...] = np.asarray(values, np.float32).reshape(blob.shape)
    layer.forward([bottom], top)
    return layer, top


def per(values):
    """Per-channel values shaped to broadcast over (N, C, H, W)."""
    return np.asarray(values, np.float64)[:, None, None]


def test_blobs_are_scale_and_shift(make_layer, gaussian):
    layer, _ = run(make_layer, gaussian((2, 3, 2, 2)))
    assert isinstance(layer, SegNetBNLayer)
    assert [b.shape for b in layer.blobs] == [(1, 3, 1, 1)] * 2
    assert layer.blobs[0].cpu_data().ravel().tolist() == [1, 1, 1]


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_learn_normalises_by_batch_statistics_in_every_phase(make_layer, gaussian, phase):
    bottom = gaussian((2, 3, 4, 5))
    scale, shift = [0.5, 2.0, -1.0], [0.1, 0.2, 0.3]
    _, (top, mean, var) = run(make_layer, bottom, tops=3, phase=phase, scale=scale, shift=shift)
    x = bottom.cpu_data().astype(np.float64)
    want_mean, want_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(mean.cpu_data().ravel(), want_mean, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(var.cpu_data().ravel(), want_var, rtol=1e-4)
    assert mean.shape == var.shape == (1, 3, 1, 1)
    want = (x - per(want_mean)) / np.sqrt(per(want_var) + 1e-9) * per(scale) + per(shift)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-5)


def test_learn_variance_is_e_x2_minus_mean_squared(make_layer, blob_of):
    """SegNet's E(x^2) - (E x)^2 in float32 loses the spread 0.25 of 4096 +- 0.5; its eps is 1e-9."""
    bottom = blob_of(np.array([4096, 4097, 4096, 4097], np.float32).reshape(1, 1, 2, 2))
    _, (top, mean, var) = run(make_layer, bottom, tops=3)
    assert (mean.cpu_data().item(), var.cpu_data().item()) == (4096.5, 0.0)
    np.testing.assert_allclose(top.cpu_data().ravel(), np.array([-0.5, 0.5, -0.5, 0.5]) / np.sqrt(1e-9),
                               rtol=1e-4)


def test_inference_is_scale_and_shift(make_layer, gaussian):
    bottom = gaussian((2, 3, 2, 3))
    _, (top,) = run(make_layer, bottom, "INFERENCE", scale=[2, 3, 4], shift=[1, 0, -1])
    want = bottom.cpu_data() * per([2, 3, 4]) + per([1, 0, -1])
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-6)


def test_gradient_learn(make_layer, gaussian):
    layer = make_layer(bn_text())
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((3, 2, 2, 3))], [Blob()])


def test_gradient_inference(make_layer, gaussian):
    layer = make_layer(bn_text("INFERENCE"))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((2, 2, 2, 3))], [Blob()])


def test_param_diffs_accumulate_and_respect_propagation(make_layer, gaussian):
    bottom = gaussian((2, 3, 2, 2))
    layer, (top,) = run(make_layer, bottom)
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    once = layer.blobs[1].cpu_diff().copy()
    np.testing.assert_allclose(once.ravel(), 8)
    layer.set_param_propagate_down(1, False)
    bottom.mutable_cpu_diff()[...] = 5
    layer.backward([top], [False], [bottom])
    np.testing.assert_allclose(layer.blobs[1].cpu_diff(), once)
    assert (bottom.cpu_diff() == 5).all()


def test_inference_takes_one_top(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="at most 1 top"):
        run(make_layer, gaussian((1, 2, 2, 2)), "INFERENCE", tops=2)


def test_refuses_a_channel_change(make_layer, gaussian):
    layer, top = run(make_layer, gaussian((1, 2, 2, 2)))
    with pytest.raises(LayerSetupError, match="blob 0 holds 2 values"):
        layer.reshape([gaussian((1, 3, 2, 2))], top)


def test_refuses_five_axes(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="at most 4 axes"):
        run(make_layer, gaussian((1, 2, 2, 2, 2)))


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["LEARN", "INFERENCE"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, mode):
    gpu_matches_cpu(bn_text(mode), [gaussian((2, 3, 4, 5)).cpu_data()], rtol=1e-4, atol=1e-5)
