"""Axpy: forward against a loop over (n, c), the gradient of all three bottoms, in place on y, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

TEXT = 'name: "axpy" type: "Axpy"'


def reference(a: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """F[n, c] = a[n, c] * X[n, c] + Y[n, c], one (n, c) at a time, as the fork's loop."""
    out = y.copy()
    flat_a = a.reshape(-1)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            out[n, c] = flat_a[n * x.shape[1] + c] * x[n, c] + y[n, c]
    return out


@pytest.mark.parametrize(("scale_shape", "shape"), [((2, 3, 1, 1), (2, 3, 4, 5)), ((2, 3), (2, 3, 4, 5)),
                                                    ((2, 3), (2, 3)), ((2, 3, 1), (2, 3, 6))])
def test_forward(make_layer, gaussian, scale_shape, shape):
    bottom = [gaussian(scale_shape, seed=1), gaussian(shape, seed=2), gaussian(shape, seed=3)]
    layer, top = make_layer(TEXT), Blob()
    layer.setup(bottom, [top])
    assert top.shape == shape
    layer.forward(bottom, [top])
    expected = reference(*(b.cpu_data() for b in bottom))
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("scale_shape", [(2, 3, 1, 1), (2, 3)])
def test_gradient(make_layer, gaussian, scale_shape):
    bottom = [gaussian(scale_shape, seed=1), gaussian((2, 3, 2, 3), seed=2), gaussian((2, 3, 2, 3), seed=3)]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(TEXT), bottom, [Blob()])


def test_backward_values(make_layer, blob_of):
    a, x = blob_of([[2.0, -1.0]]), blob_of(np.arange(8.0).reshape(1, 2, 2, 2))
    y = blob_of(np.ones((1, 2, 2, 2)))
    layer, top = make_layer(TEXT), Blob()
    layer.setup([a, x, y], [top])
    layer.forward([a, x, y], [top])
    top.mutable_cpu_diff()[...] = np.arange(8.0).reshape(1, 2, 2, 2)
    layer.backward([top], [True, True, True], [a, x, y])
    np.testing.assert_array_equal(a.cpu_diff(), [[0 + 1 + 4 + 9, 16 + 25 + 36 + 49]])
    np.testing.assert_array_equal(x.cpu_diff().reshape(2, 4), [[0, 2, 4, 6], [-4, -5, -6, -7]])
    np.testing.assert_array_equal(y.cpu_diff().reshape(-1), np.arange(8.0))


def test_only_the_bottoms_asked_for(make_layer, gaussian):
    bottom = [gaussian((2, 3)), gaussian((2, 3, 2)), gaussian((2, 3, 2))]
    layer, top = make_layer(TEXT), Blob()
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    for blob in bottom:
        blob.mutable_cpu_diff()[...] = 7
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [False, True, False], bottom)
    assert (bottom[0].cpu_diff() == 7).all() and (bottom[2].cpu_diff() == 7).all()
    scale = bottom[0].cpu_data()[:, :, None]
    np.testing.assert_array_equal(bottom[1].cpu_diff(), np.repeat(scale, 2, axis=2))


def test_in_place_on_y(make_layer, gaussian):
    a, x, y = gaussian((2, 3, 1, 1), seed=1), gaussian((2, 3, 2, 2), seed=2), gaussian((2, 3, 2, 2), seed=3)
    expected = reference(a.cpu_data(), x.cpu_data(), y.cpu_data())
    layer = make_layer(TEXT)
    layer.setup([a, x, y], [y])
    layer.forward([a, x, y], [y])
    np.testing.assert_allclose(y.cpu_data(), expected, rtol=1e-6, atol=1e-7)
    y.mutable_cpu_diff()[...] = 1
    layer.backward([y], [True, True, True], [a, x, y])
    np.testing.assert_array_equal(y.cpu_diff(), np.ones((2, 3, 2, 2)))
    np.testing.assert_allclose(a.cpu_diff().reshape(2, 3), x.cpu_data().sum(axis=(2, 3)), rtol=1e-6)


@pytest.mark.parametrize(("shapes", "message"), [
    (((3, 3, 1, 1), (2, 3, 4, 4), (2, 3, 4, 4)), "bottom 0 \\(the scale a\\) must be"),
    (((2, 2), (2, 3, 4, 4), (2, 3, 4, 4)), "bottom 0 \\(the scale a\\) must be"),
    (((2, 3, 2, 1), (2, 3, 4, 4), (2, 3, 4, 4)), "bottom 0 \\(the scale a\\) must be"),
    (((6,), (2, 3, 4, 4), (2, 3, 4, 4)), "bottom 0 \\(the scale a\\) must be"),
    (((2, 3), (2, 3, 4, 4), (2, 3, 4, 5)), "bottoms 1 \\(x\\) and 2 \\(y\\) must have one shape"),
    (((2,), (2,), (2,)), "bottom 1 \\(x\\) needs a channel axis"),
])
def test_refusals(make_layer, gaussian, shapes, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(TEXT).setup([gaussian(shape) for shape in shapes], [Blob()])


def test_refuses_two_bottoms(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="takes 3 bottom"):
        make_layer(TEXT).setup([gaussian((2, 3)), gaussian((2, 3))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    rng = np.random.default_rng(3)
    gpu_matches_cpu(TEXT, [rng.standard_normal((2, 3, 1, 1)), rng.standard_normal((2, 3, 4, 5)),
                           rng.standard_normal((2, 3, 4, 5))])
