"""Mish: the fork's float forward (softplus threshold 20), values derived by hand, the derivative at x
(gradient-checked; Chen's fork evaluates it at y), in-place use, GPU mode."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_layers_yolo.mish import mish_slope

TEXT = 'name: "mish" type: "Mish" bottom: "x" top: "y"'


def reference(x):
    """x tanh(ln(1 + e^x)) in double, with the fork's threshold 20 on softplus."""
    sp = x if x > 20 else (math.exp(x) if x < -20 else math.log1p(math.exp(x)))
    return x * math.tanh(sp)


def fork_float(x):
    """Chen's forward as its C++ evaluates it on one float: expf/logf rounded to float, float arithmetic."""
    f = np.float32
    x = f(x)
    e = f(math.exp(x))
    sp = x if x > 20 else (e if x < -20 else f(math.log(f(e + f(1)))))
    return x * (f(2) / (f(1) + f(math.exp(f(-2) * sp))) - f(1))


def forward(make_layer, blob_of, x, text=TEXT):
    layer = make_layer(text)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_values_by_hand(make_layer, blob_of):
    # mish(0) = 0; mish(1) = tanh(ln(1 + e)) = 0.8650984; mish(-1) = -tanh(ln(1 + 1/e)) = -0.3034014;
    # far above 20 it is x (tanh(x) rounds to 1), far below -20 it is x e^x.
    x = np.array([0.0, 1.0, -1.0, 25.0, -30.0, 3.5], dtype=np.float32)
    _, _, top = forward(make_layer, blob_of, x)
    y = top[0].cpu_data()
    assert y[0] == 0 and y[3] == np.float32(25.0)
    np.testing.assert_allclose(y[1:3], [0.8650984, -0.3034014], rtol=1e-6)
    np.testing.assert_array_equal(y, [fork_float(v) for v in x])


def test_the_forks_float_arithmetic_over_a_range(make_layer, blob_of):
    # Bit for bit the fork's float evaluation; within float cancellation of the exact Mish (the fork's
    # 2 / (1 + e^-2sp) - 1 loses small tanh values: below x = -17 or so it returns -0).
    x = np.linspace(-25, 25, 1001, dtype=np.float32)
    _, _, top = forward(make_layer, blob_of, x)
    np.testing.assert_array_equal(top[0].cpu_data(), [fork_float(v) for v in x])
    np.testing.assert_allclose(top[0].cpu_data(), [reference(float(v)) for v in x], rtol=5e-6, atol=2e-6)


def test_slope_by_hand():
    # d/dx x tanh(sp(x)) = tanh(sp) + x (1 - tanh(sp)^2) sigmoid(x): at 0 it is tanh(ln 2) = 0.6.
    slope = mish_slope(np, np.array([0.0, 30.0], dtype=np.float32))
    np.testing.assert_allclose(slope, [0.6, 1.0], rtol=1e-12)
    x = np.linspace(-8, 8, 33)
    numeric = (np.array([reference(v + 1e-6) for v in x]) - np.array([reference(v - 1e-6) for v in x])) / 2e-6
    np.testing.assert_allclose(mish_slope(np, x.astype(np.float32)), numeric, rtol=1e-5, atol=1e-7)


def test_backward_is_taken_at_the_input_not_the_output(make_layer, blob_of):
    # Chen's fork evaluates the slope formula at y instead of x: at x = -1 (y = -0.3034) the true slope is
    # 0.0592, the fork's 0.4064.
    layer, bottom, top = forward(make_layer, blob_of, np.array([-1.0], dtype=np.float32))
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True], bottom)
    assert bottom[0].cpu_diff()[0] == pytest.approx(0.05921, abs=1e-5)
    assert float(mish_slope(np, top[0].cpu_data())[0]) == pytest.approx(0.4064, abs=1e-4)


def test_gradient(make_layer, gaussian):
    bottom = [gaussian((2, 3, 4, 5), std=2.0)]
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_eltwise(make_layer(TEXT), bottom, [Blob()])


def test_in_place_keeps_the_input_for_backward(make_layer, blob_of):
    x = np.array([-2.0, -0.5, 0.7, 3.0], dtype=np.float32)
    layer = make_layer('name: "mish" type: "Mish" bottom: "x" top: "x"')
    blob = blob_of(x)
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    blob.mutable_cpu_diff()[...] = 1
    layer.backward([blob], [True], [blob])
    np.testing.assert_allclose(blob.cpu_diff(), mish_slope(np, x), rtol=1e-6)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(2).normal(0, 5, (2, 3, 4, 5)).astype(np.float32)
    gpu_matches_cpu(TEXT, [x], rtol=1e-6, atol=1e-7)
