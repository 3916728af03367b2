"""Slice: golden numbers, slice points, equal parts, gradient, config errors."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def layer_text(params: str, tops: int) -> str:
    top_lines = " ".join(f'top: "t{i}"' for i in range(tops))
    return f'name: "slice" type: "Slice" {top_lines} slice_param {{ {params} }}'


def test_golden(golden_case):
    assert check_layer_case(golden_case("slice")) == []


@pytest.mark.parametrize(("params", "tops", "axis", "bounds"), [
    ("slice_point: 1 slice_point: 4", 3, 1, [1, 4]),
    ("", 3, 1, [2, 4]),
    ("axis: 0", 2, 0, [1]),
    ("slice_dim: 2 slice_point: 2", 2, 2, [2]),
])
def test_forward_and_backward(make_layer, blob_of, params, tops, axis, bounds):
    x = gaussian((2, 6, 3)).astype(np.float32)
    bottom, top = [blob_of(x)], [Blob() for _ in range(tops)]
    layer = make_layer(layer_text(params, tops))
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    parts = np.split(x, bounds, axis=axis)
    for blob, part in zip(top, parts, strict=True):
        np.testing.assert_array_equal(blob.cpu_data(), part)
        blob.mutable_cpu_diff()[...] = 3 * part
    layer.backward(top, [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), 3 * x)


def test_single_top_shares_memory(make_layer, blob_of):
    bottom, top = [blob_of(gaussian((2, 3)))], [Blob()]
    make_layer(layer_text("", 1)).setup(bottom, top)
    bottom[0].mutable_cpu_data()[1, 2] = 7
    assert top[0].cpu_data()[1, 2] == 7


@pytest.mark.parametrize(("params", "tops"), [("slice_point: 1 slice_point: 3", 3), ("", 2), ("axis: 0", 2)])
def test_gradient(make_layer, blob_of, params, tops):
    bottom = [blob_of(gaussian((2, 4, 2)))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(layer_text(params, tops)), bottom,
                                                          [Blob() for _ in range(tops)])


@pytest.mark.parametrize(("params", "message"), [
    ("slice_point: 4", "slice_point 4 is out of range"),
    ("slice_point: 0", "slice_point 0 is out of range"),
    ("slice_point: 9", "slice_point 9 is out of range"),
])
def test_slice_points_out_of_range_are_refused(make_layer, blob_of, params, message):
    with pytest.raises(LayerSetupError, match=f"'slice'.*{message}"):
        make_layer(layer_text(params, 2)).setup([blob_of(gaussian((2, 4)))], [Blob(), Blob()])


def test_slice_points_must_increase(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'slice'.*slice_point 1 is out of range.*increase strictly"):
        make_layer(layer_text("slice_point: 2 slice_point: 1", 3)).setup(
            [blob_of(gaussian((2, 4)))], [Blob(), Blob(), Blob()])


def test_slice_point_count_must_match_the_tops(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'slice'.*one slice_point fewer than tops"):
        make_layer(layer_text("slice_point: 1", 3)).setup([blob_of(gaussian((2, 4)))],
                                                          [Blob(), Blob(), Blob()])


def test_equal_parts_must_divide_the_axis(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'slice'.*number of top blobs \\(3\\) should evenly divide"):
        make_layer(layer_text("", 3)).setup([blob_of(gaussian((2, 4)))], [Blob(), Blob(), Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(layer_text("slice_point: 1", 2), [gaussian((2, 3, 4))])
