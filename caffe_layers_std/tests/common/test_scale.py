"""Scale: golden numbers, broadcasting, bias term, second-bottom scale, in-place use, gradient."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

FILLERS = 'filler { type: "gaussian" } bias_filler { type: "gaussian" }'


def layer_text(params: str = "") -> str:
    return f'name: "scale" type: "Scale" scale_param {{ {params} {FILLERS} }}'


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def forward(layer, arrays):
    bottom, top = [Blob(np.shape(a)) for a in arrays], Blob()
    for blob, array in zip(bottom, arrays, strict=True):
        blob.mutable_cpu_data()[...] = array
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    return bottom, top


def test_golden(golden_case):
    assert check_layer_case(golden_case("scale")) == []


@pytest.mark.parametrize(("params", "shape", "view"), [
    ("", (3,), (1, 3, 1, 1)),
    ("axis: 0 num_axes: 2", (2, 3), (2, 3, 1, 1)),
    ("axis: -1", (5,), (1, 1, 1, 5)),
    ("num_axes: 0", (), (1, 1, 1, 1)),
])
def test_learned_scale_broadcasts(make_layer, params, shape, view):
    x = gaussian((2, 3, 4, 5))
    layer = make_layer(layer_text(params))
    _, top = forward(layer, [x])
    assert layer.blobs[0].shape == shape
    gamma = layer.blobs[0].cpu_data().reshape(view)
    np.testing.assert_allclose(top.cpu_data(), x.astype(np.float32) * gamma, rtol=1e-6)


def test_default_gamma_is_one(make_layer):
    layer = make_layer('name: "scale" type: "Scale"')
    forward(layer, [gaussian((2, 3))])
    np.testing.assert_array_equal(layer.blobs[0].cpu_data(), 1)


def test_bias_term_adds_a_learned_beta(make_layer):
    x = gaussian((2, 3, 4))
    layer = make_layer(layer_text("bias_term: true"))
    _, top = forward(layer, [x])
    assert [b.shape for b in layer.blobs] == [(3,), (3,)]
    gamma, beta = (b.cpu_data().reshape(1, 3, 1) for b in layer.blobs)
    np.testing.assert_allclose(top.cpu_data(), x.astype(np.float32) * gamma + beta, rtol=1e-5, atol=1e-6)


def test_scale_from_a_second_bottom_with_bias(make_layer):
    x, gamma = gaussian((2, 3, 4)), gaussian((2, 3), 2)
    layer = make_layer(layer_text("axis: 0 bias_term: true"))
    _, top = forward(layer, [x, gamma])
    assert [b.shape for b in layer.blobs] == [(2, 3)]
    beta = layer.blobs[0].cpu_data()
    expected = (x * gamma[..., None]).astype(np.float32) + beta[..., None]
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-5, atol=1e-6)


def test_stored_blobs_are_used(make_layer):
    text = ('name: "scale" type: "Scale" scale_param { bias_term: true } '
            'blobs { shape { dim: 2 } data: 2 data: 3 } blobs { shape { dim: 2 } data: 10 data: 20 }')
    _, top = forward(make_layer(text), [np.ones((1, 2))])
    np.testing.assert_array_equal(top.cpu_data(), [[12.0, 23.0]])


def test_in_place_matches_out_of_place(make_layer):
    x, dy = gaussian((2, 3, 4)), gaussian((2, 3, 4), 2).astype(np.float32)
    results = []
    for in_place in (False, True):
        runtime.set_random_seed(5)
        layer = make_layer(layer_text("bias_term: true"))
        bottom = Blob(x.shape)
        bottom.mutable_cpu_data()[...] = x
        top = bottom if in_place else Blob()
        layer.setup([bottom], [top])
        layer.forward([bottom], [top])
        y = top.cpu_data().copy()
        top.mutable_cpu_diff()[...] = dy
        layer.backward([top], [True], [bottom])
        results.append([y, bottom.cpu_diff().copy()] + [b.cpu_diff().copy() for b in layer.blobs])
    for got, want in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_learned_diffs_accumulate(make_layer):
    layer = make_layer(layer_text("bias_term: true"))
    bottom, top = forward(layer, [np.ones((2, 3))])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    layer.backward([top], [True], bottom)
    for blob in layer.blobs:
        np.testing.assert_array_equal(blob.cpu_diff(), [4.0, 4.0, 4.0])


@pytest.mark.parametrize(("params", "shape", "per_pass", "passes_kept"), [
    ("", (2, 3, 4), 8.0, 2),
    ("num_axes: 0", (3, 4), 12.0, 2),
    ("axis: 0", (3,), 1.0, 1),
    ("axis: 0", (3, 4), 4.0, 1),
    ("axis: 0 num_axes: 2", (2, 3, 4), 4.0, 1),
])
def test_learned_scale_diff_accumulates_only_where_caffe_does(make_layer, params, shape, per_pass,
                                                              passes_kept):
    # Caffe writes gamma's diff directly when the scale spans one outer block (the whole bottom, or several
    # entries with an inner extent): a second backward then replaces the first pass's diff.
    layer = make_layer(layer_text(params))
    bottom, top = forward(layer, [np.ones(shape)])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], bottom)
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(layer.blobs[0].cpu_diff(), per_pass * passes_kept)


@pytest.mark.parametrize("params", ["", "bias_term: true", "axis: 0 num_axes: 2",
                                    "num_axes: 0 bias_term: true", "num_axes: -1"])
def test_gradient(make_layer, blob_of, params):
    bottom = [blob_of(gaussian((2, 3, 2, 2)))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text(params)), bottom, [Blob()])


@pytest.mark.parametrize(("params", "scale_shape"), [("", (3, 2)), ("axis: 0 bias_term: true", (2, 3, 2, 2))])
def test_gradient_with_a_scale_bottom(make_layer, blob_of, params, scale_shape):
    bottom = [blob_of(gaussian((2, 3, 2, 2))), blob_of(gaussian(scale_shape, 2))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text(params)), bottom, [Blob()])


def test_scale_past_the_bottom_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'scale'.*extends past bottom"):
        make_layer(layer_text("num_axes: 3")).setup([blob_of(gaussian((2, 3, 4)))], [Blob()])


def test_negative_num_axes_below_minus_one_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'scale'.*num_axes must be non-negative, or -1"):
        make_layer(layer_text("num_axes: -2")).setup([blob_of(gaussian((2, 3, 4)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text("bias_term: true"), [gaussian((2, 3, 4))])
