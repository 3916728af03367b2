"""Bias: golden numbers, broadcasting, learned vs. bottom bias, gradient, shape errors."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

FILLER = 'filler { type: "gaussian" }'


def layer_text(params: str = "") -> str:
    return f'name: "bias" type: "Bias" bias_param {{ {params} {FILLER} }}'


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("bias")) == []


@pytest.mark.parametrize(("params", "shape", "view"), [
    ("", (3,), (1, 3, 1, 1)),
    ("axis: 0 num_axes: 2", (2, 3), (2, 3, 1, 1)),
    ("axis: -2 num_axes: -1", (4, 5), (1, 1, 4, 5)),
    ("num_axes: 0", (), (1, 1, 1, 1)),
])
def test_learned_bias_broadcasts(make_layer, blob_of, params, shape, view):
    x = gaussian((2, 3, 4, 5))
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer(layer_text(params))
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    assert layer.blobs[0].shape == shape
    b = layer.blobs[0].cpu_data().reshape(view)
    np.testing.assert_allclose(top.cpu_data(), x.astype(np.float32) + b, rtol=1e-6)


def test_default_filler_is_zero(make_layer, blob_of):
    layer = make_layer('name: "bias" type: "Bias"')
    layer.setup([blob_of(gaussian((2, 3)))], [Blob()])
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), 0)


def test_bias_from_a_second_bottom(make_layer, blob_of):
    x, b = gaussian((2, 3, 4)), gaussian((3, 4), 2)
    bottom, top = [blob_of(x), blob_of(b)], Blob()
    layer = make_layer('name: "bias" type: "Bias"')
    layer.setup(bottom, [top])
    assert layer.blobs == []
    layer.forward(bottom, [top])
    np.testing.assert_allclose(top.cpu_data(), (x + b).astype(np.float32), rtol=1e-6)
    top.mutable_cpu_diff()[...] = 1
    bottom[1].mutable_cpu_diff()[...] = 100
    layer.backward([top], [True, True], bottom)
    np.testing.assert_array_equal(bottom[1].cpu_diff(), 2)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), 1)


def test_scalar_bias_bottom_ignores_the_axis(make_layer, blob_of):
    """Caffe takes axis 0 for a 0-axis bias and never checks bias_param.axis (here out of range)."""
    x = gaussian((2, 3))
    bottom, top = [blob_of(x), blob_of(np.array(1.5))], Blob()
    layer = make_layer('name: "bias" type: "Bias" bias_param { axis: 5 }')
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_allclose(top.cpu_data(), x.astype(np.float32) + 1.5, rtol=1e-6)


def test_learned_bias_diff_accumulates(make_layer, blob_of):
    bottom, top = [blob_of(gaussian((2, 3)))], Blob()
    layer = make_layer(layer_text())
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(layer.blobs[0].cpu_diff(), [4.0, 4.0, 4.0])


@pytest.mark.parametrize("params", ["", "axis: 0 num_axes: 2", "num_axes: 0", "num_axes: -1"])
def test_gradient(make_layer, blob_of, params):
    bottom = [blob_of(gaussian((2, 3, 2, 2)))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text(params)), bottom, [Blob()])


def test_gradient_with_a_bias_bottom(make_layer, blob_of):
    bottom = [blob_of(gaussian((2, 3, 2))), blob_of(gaussian((3, 2), 2))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text()), bottom, [Blob()])


def test_bias_past_the_bottom_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'bias'.*extends past bottom"):
        make_layer(layer_text("axis: 1 num_axes: 3")).setup([blob_of(gaussian((2, 3, 4)))], [Blob()])


def test_mismatched_bias_bottom_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'bias'.*does not match bottom"):
        make_layer(layer_text()).setup([blob_of(gaussian((2, 3, 4))), blob_of(gaussian((4,)))], [Blob()])


def test_negative_num_axes_is_refused(make_layer, blob_of):
    """Caffe's CHECK_GE(num_axes, -1) message, under the parameter's name."""
    with pytest.raises(LayerSetupError, match=r"'bias'.*bias_param.num_axes must be non-negative, or -1 to "
                                              r"extend to the end of bottom\[0\]"):
        make_layer(layer_text("num_axes: -2")).setup([blob_of(gaussian((2, 3)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text(), [gaussian((2, 3, 4))])
