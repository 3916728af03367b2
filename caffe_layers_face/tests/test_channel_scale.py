"""ChannelScale: per-sample (and per-position) scales by hand, its backward switches, the global scale (the
fork's CPU code clips the stored value; its GPU code keeps a running mean in TRAIN), gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker

X = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], dtype=np.float32)
S = np.array([[2.0], [-3.0]], dtype=np.float32)
TEXT = 'name: "c" type: "ChannelScale" bottom: "x" bottom: "s" top: "y"'


def run(make_layer, blob_of, text=TEXT, x=X, s=S, tops=1, phase=caffe_pb2.TRAIN):
    layer = make_layer(text, phase=phase)
    bottom, top = [blob_of(x), blob_of(s)], [Blob() for _ in range(tops)]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_scales_each_sample(make_layer, blob_of):
    _, _, top = run(make_layer, blob_of)
    np.testing.assert_array_equal(top[0].cpu_data(), [[2.0, -4.0, 6.0], [-1.5, 0.0, 3.0]])


def test_scales_each_position(make_layer, blob_of, gaussian):
    x, s = gaussian((2, 3, 2, 2)).cpu_data(), gaussian((2, 1, 2, 2), seed=2).cpu_data()
    _, _, top = run(make_layer, blob_of, x=x, s=s)
    np.testing.assert_allclose(top[0].cpu_data(), x * s, rtol=1e-7)


def test_backward_by_hand_and_its_switches(make_layer, blob_of):
    dy = np.array([[1.0, 1.0, 1.0], [2.0, 0.0, 1.0]], dtype=np.float32)
    for params, dx, ds in (
        ("", dy * S, [[2.0], [0.0]]),
        ("channel_scale_param { do_backward_feature: false do_backward_scale: false }", dy, [[0.0], [0.0]]),
    ):
        layer, bottom, top = run(make_layer, blob_of, f"{TEXT} {params}")
        top[0].mutable_cpu_diff()[...] = dy
        layer.backward(top, [True, True], bottom)
        np.testing.assert_array_equal(bottom[0].cpu_diff(), dx)
        np.testing.assert_array_equal(bottom[1].cpu_diff(), ds)


def test_without_do_forward_it_copies(make_layer, blob_of):
    _, _, top = run(make_layer, blob_of, f"{TEXT} channel_scale_param {{ do_forward: false }}")
    np.testing.assert_array_equal(top[0].cpu_data(), X)


def test_refuses_scales_of_another_count(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="one per sample and position"):
        run(make_layer, blob_of, s=np.ones((2, 2), np.float32))


GLOBAL = ('name: "c" type: "ChannelScale" bottom: "x" bottom: "s" top: "y" top: "g" '
          'channel_scale_param { global_scale: true min_global_scale: 0.5 }')


@pytest.mark.cpu_mode
def test_global_scale_on_the_forks_cpu_code_clips_the_stored_value(make_layer, blob_of):
    # The stored -1 clips to min_global_scale (0.5); the CPU code never updates it.
    layer, bottom, top = run(make_layer, blob_of, GLOBAL, tops=2)
    assert layer.layer_param.param[0].lr_mult == 0
    assert top[1].cpu_data()[0] == 0.5 and layer.blobs[0].cpu_data()[0] == 0.5
    np.testing.assert_array_equal(top[0].cpu_data(), X * 0.5)


@pytest.mark.gpu
def test_global_scale_on_the_forks_gpu_code_keeps_a_running_mean(make_layer, blob_of, gpu_standin):
    # mean |s| = 2.5: the first TRAIN pass takes it, the next 0.99 * 2.5 + 0.01 * 2.5; then with s = (1, 1):
    # 0.99 * 2.5 + 0.01 * 1 = 2.485.
    layer, bottom, top = run(make_layer, blob_of, GLOBAL, tops=2)
    assert top[1].cpu_data()[0] == 2.5
    np.testing.assert_allclose(top[0].cpu_data(), X * 2.5)
    bottom[1].mutable_cpu_data()[...] = 1.0
    layer.forward(bottom, top)
    assert top[1].cpu_data()[0] == np.float32(0.99 * 2.5 + 0.01 * 1.0)


@pytest.mark.gpu
def test_global_scale_in_test_phase_uses_the_stored_value(make_layer, blob_of, gpu_standin):
    layer = make_layer(GLOBAL, phase=caffe_pb2.TEST)
    bottom, top = [blob_of(X), blob_of(S)], [Blob(), Blob()]
    layer.setup(bottom, top)
    layer.blobs[0].mutable_cpu_data()[...] = 4.0
    layer.forward(bottom, top)
    assert top[1].cpu_data()[0] == 4.0


def test_global_scale_refuses_a_learned_scale(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="lr_mult"):
        run(make_layer, blob_of, GLOBAL.replace('top: "g"', 'top: "g" param { lr_mult: 1 }'), tops=2)


def test_second_top_needs_global_scale(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="global_scale"):
        run(make_layer, blob_of, TEXT + ' top: "g"', tops=2)


def test_gradient(make_layer, gaussian):
    layer = make_layer('name: "c" type: "ChannelScale"')
    bottom = [gaussian((2, 3, 2, 2)), gaussian((2, 1, 2, 2), seed=5)]
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, bottom, [Blob()])
