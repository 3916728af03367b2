"""NormL2 (arcface-caffe's AdaCos): unit-norm samples against the fork's loops, the legacy 4-axis top shape,
a gradient check and GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker

TEXT = 'name: "norm_fc5" type: "NormL2" bottom: "fc5" top: "norm_fc5"'


def test_matches_the_fork(make_layer, blob_of, fork_face):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(4, 7)).astype(np.float32)
    layer = make_layer(TEXT)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    dy = rng.normal(size=(4, 7)).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = dy.reshape(top[0].shape)
    layer.backward(top, [True], bottom)
    want, dx = fork_face.norm_l2(x, dy)
    assert top[0].shape == (4, 7, 1, 1)
    np.testing.assert_allclose(top[0].cpu_data().reshape(4, 7), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-5, atol=1e-6)


def test_by_hand_and_zero(make_layer, blob_of):
    layer = make_layer(TEXT)
    bottom, top = [blob_of(np.array([[3, 4], [0, 0]], np.float32))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[0].cpu_data().reshape(2, 2), [[0.6, 0.8], [0, 0]], rtol=1e-6)


def test_gradient(make_layer, gaussian):
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(make_layer(TEXT), [gaussian((2, 3, 2, 1))],
                                                                 [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, [np.random.default_rng(2).normal(size=(3, 4, 2, 1))])
