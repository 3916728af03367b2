"""Softmax: golden case, forward against exp/sum, stability at 1e4, axis, gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("softmax")) == []


def test_golden_bit_exact(golden_bit_exact):
    # The diff is only within tolerance: Caffe's per-position dot is BLAS's sdot, which sums in its own order.
    assert golden_bit_exact("softmax", inexact=("diff/x",)) == []


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_forward(make_layer, blob_of, axis):
    x = np.random.default_rng(2).standard_normal((2, 10, 2, 3)).astype(np.float32)
    layer = make_layer(f'name: "s" type: "Softmax" softmax_param {{ axis: {axis} }}')
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    e = np.exp(x.astype(np.float64))
    np.testing.assert_allclose(top.cpu_data(), e / e.sum(axis=axis, keepdims=True), rtol=1e-5, atol=1e-7)


def test_large_logits_do_not_overflow(make_layer, blob_of):
    x = np.array([[1e4, 1e4 - 1, -1e4], [1e4, 1e4, 1e4]], dtype=np.float32)
    layer = make_layer('name: "s" type: "Softmax"')
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    y = top.cpu_data()
    assert np.isfinite(y).all()
    e = np.exp([0.0, -1.0])
    np.testing.assert_allclose(y[0], [e[0] / e.sum(), e[1] / e.sum(), 0], atol=1e-6)
    np.testing.assert_allclose(y[1], [1 / 3] * 3, rtol=1e-6)


def test_in_place(make_layer, blob_of):
    x = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    layer = make_layer('name: "s" type: "Softmax"')
    blob = blob_of(x)
    layer.setup([blob], [blob])
    layer.forward([blob], [blob])
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(blob.cpu_data(), e / e.sum(axis=1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("axis", [1, 2])
def test_gradient(make_layer, blob_of, axis):
    x = np.random.default_rng(1701).standard_normal((2, 3, 2, 2))
    layer = make_layer(f'name: "s" type: "Softmax" softmax_param {{ axis: {axis} }}')
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [blob_of(x)], [Blob()])


def test_axis_out_of_range_names_the_field(make_layer, blob_of):
    """Caffe's CanonicalAxisIndex check, reported under the parameter that set the axis."""
    layer = make_layer('name: "s" type: "Softmax" softmax_param { axis: 2 }')
    with pytest.raises(LayerSetupError, match="'s'.*softmax_param.axis: axis 2 out of range"):
        layer.setup([blob_of(np.zeros((2, 3)))], [Blob()])
