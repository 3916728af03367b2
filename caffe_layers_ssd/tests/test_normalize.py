"""Normalize: the golden case, a loop reference for the four across_spatial / channel_shared combinations,
gradients with the fork's checker parameters (bottom and scale), refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def norm_text(params):
    return f"name: 'norm' type: 'Normalize' norm_param {{ {params} }}"


def test_golden(golden_case):
    assert check_layer_case(golden_case("normalize_chan_scale")) == []


def reference(x, across_spatial, scale, eps=1e-10):
    out = np.empty_like(x, dtype=float)
    num, channels = x.shape[:2]
    for n in range(num):
        if across_spatial:
            out[n] = x[n] / np.sqrt((x[n].astype(float) ** 2).sum() + eps)
        else:
            for index in np.ndindex(*x.shape[2:]):
                column = x[(n, slice(None), *index)].astype(float)
                out[(n, slice(None), *index)] = column / np.sqrt((column ** 2).sum() + eps)
        for c in range(channels):
            out[n, c] *= scale[c] if len(scale) > 1 else scale[0]
    return out


@pytest.mark.parametrize("across", [True, False])
@pytest.mark.parametrize("shared", [True, False])
def test_forward_against_reference(make_layer, gaussian, across, shared):
    bottom = gaussian((2, 3, 4, 5))
    params = f"across_spatial: {str(across).lower()} channel_shared: {str(shared).lower()} " \
             "scale_filler { type: 'gaussian' mean: 5 std: 2 }"
    layer, top = make_layer(norm_text(params)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    scale = layer.blobs[0].cpu_data().reshape(-1)
    assert layer.blobs[0].shape == (() if shared else (3,))
    want = reference(bottom.cpu_data(), across, scale)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-5, atol=1e-6)


def test_default_scale_is_one_and_eps_is_used(make_layer, blob_of):
    bottom = blob_of(np.array([[[[3.0]], [[4.0]]], [[[0.0]], [[0.0]]]]))
    layer, top = make_layer(norm_text("eps: 0.0001")), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    assert layer.blobs[0].cpu_data() == 1
    np.testing.assert_allclose(top.cpu_data().reshape(2, 2), [[3 / np.sqrt(25.0001), 4 / np.sqrt(25.0001)],
                                                             [0, 0]], rtol=1e-6)


def test_two_axis_bottom(make_layer, gaussian):
    bottom = gaussian((3, 6))
    layer, top = make_layer(norm_text("across_spatial: false")), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    np.testing.assert_allclose(np.linalg.norm(top.cpu_data(), axis=1), 1, rtol=1e-5)


@pytest.mark.parametrize(("params", "step", "threshold"), [
    ("", 1e-2, 1e-3),
    ("scale_filler { type: 'constant' value: 3 }", 1e-2, 1e-3),
    ("channel_shared: false scale_filler { type: 'constant' value: 3 }", 1e-2, 1e-3),
    ("across_spatial: false", 1e-3, 1e-3),
    ("across_spatial: false scale_filler { type: 'constant' value: 3 }", 1e-3, 2e-3),
    ("across_spatial: false channel_shared: false scale_filler { type: 'constant' value: 3 }", 1e-3, 2e-3),
])
def test_gradient(make_layer, gaussian, params, step, threshold):
    bottom = gaussian((2, 3, 2, 3))
    layer = make_layer(norm_text(params))
    GradientChecker(step, threshold).check_gradient_exhaustive(layer, [bottom], [Blob()])


def test_scale_diff_accumulates(make_layer, gaussian):
    bottom = gaussian((2, 3, 2, 3))
    layer = make_layer(norm_text("channel_shared: false scale_filler { type: 'constant' value: 2 }"))
    top = Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    layer.blobs[0].mutable_cpu_diff()[...] = 5
    layer.backward([top], [False], [bottom])
    want = 5 + top.cpu_data().sum(axis=(0, 2, 3)) / 2
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), want, rtol=1e-5)


def test_stored_scale_of_the_wrong_size(make_layer, gaussian):
    layer = make_layer(norm_text("channel_shared: false") + " blobs { shape { dim: 2 } data: 1 data: 1 }")
    with pytest.raises(LayerSetupError, match="channel_shared"):
        layer.setup([gaussian((2, 3, 2, 2))], [Blob()])


@pytest.mark.parametrize("shape", [(6,), (1, 2, 3, 4, 5)])
def test_axes_refused(make_layer, gaussian, shape):
    with pytest.raises(LayerSetupError, match="axes"):
        make_layer(norm_text("")).setup([gaussian(shape)], [Blob()])


@pytest.mark.gpu
@pytest.mark.parametrize("params", ["", "across_spatial: false channel_shared: false "
                                        "scale_filler { type: 'constant' value: 3 }"])
def test_gpu_matches_cpu(gpu_matches_cpu, params):
    x = np.random.default_rng(0).normal(size=(2, 3, 4, 5))
    gpu_matches_cpu(norm_text(params), [x], rtol=1e-4, atol=1e-5)
