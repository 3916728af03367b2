"""Upsample[nearest]: the golden case, repetition for dims_num 4 and 3, scale's default, the block-sum
gradient, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.layers import build_layer
from caffe_layers_seg.upsample_nearest import NearestUpsampleLayer


def up_text(params: str = "") -> str:
    """An Upsample layer with one bottom and this upsample_param text."""
    return f"name: 'up' type: 'Upsample' bottom: 'x' top: 'y' upsample_param {{ {params} }}"


def run(run_layer, bottom, params=""):
    """The layer and its top after setup and forward."""
    return run_layer(up_text(params), [bottom])


def test_golden(golden_case):
    assert check_layer_case(golden_case("upsample_nearest_x2")) == []


def test_one_bottom_chooses_nearest():
    assert isinstance(build_layer(up_text()), NearestUpsampleLayer)


@pytest.mark.parametrize("scale", [1, 2, 3])
def test_four_axes(run_layer, gaussian, scale):
    bottom = gaussian((2, 3, 2, 3))
    _, top = run(run_layer, bottom, f"scale: {scale}")
    x = bottom.cpu_data()
    rows, cols = np.arange(2 * scale) // scale, np.arange(3 * scale) // scale
    np.testing.assert_array_equal(top.cpu_data(), x[:, :, rows][:, :, :, cols])


def test_three_axes_scale_the_last(run_layer, gaussian):
    bottom = gaussian((2, 3, 4))
    _, top = run(run_layer, bottom, "scale: 2 dims_num: 3")
    np.testing.assert_array_equal(top.cpu_data(), np.repeat(bottom.cpu_data(), 2, axis=2))


def test_scale_defaults_to_one(run_layer, gaussian):
    bottom = gaussian((1, 2, 2, 2))
    _, top = run(run_layer, bottom)
    np.testing.assert_array_equal(top.cpu_data(), bottom.cpu_data())


@pytest.mark.parametrize(("params", "shape"), [("scale: 2", (2, 2, 2, 3)),
                                               ("scale: 3 dims_num: 3", (2, 2, 3))])
def test_gradient(make_layer, gaussian, params, shape):
    layer = make_layer(up_text(params))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian(shape)], [Blob()])


def test_backward_sums_each_block(run_layer, blob_of):
    bottom = blob_of(np.zeros((1, 1, 1, 2)))
    layer, top = run(run_layer, bottom, "scale: 2")
    top.mutable_cpu_diff()[...] = np.arange(8).reshape(top.shape)
    layer.backward([top], [True], [bottom])
    assert bottom.cpu_diff().ravel().tolist() == [0 + 1 + 4 + 5, 2 + 3 + 6 + 7]


@pytest.mark.parametrize(("params", "shape", "message"), [
    ("dims_num: 5", (1, 1, 2, 2), "dims_num must be 3"),
    ("scale: 0", (1, 1, 2, 2), "scale must be at least 1"),
    ("scale: 2", (1, 2, 2), "dims_num 4 needs a 4-axis bottom"),
    ("scale: 2 dims_num: 3", (1, 1, 2, 2), "dims_num 3 needs a 3-axis bottom"),
])
def test_refusals(run_layer, gaussian, params, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian(shape), params)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian):
    gpu_matches_cpu(up_text("scale: 2"), [gaussian((2, 3, 3, 4)).cpu_data()])
