"""Concat: golden numbers, axes, single bottom, gradient, shape errors."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("concat")) == []


@pytest.mark.parametrize(("params", "axis"), [("", 1), ("axis: 0", 0), ("axis: -1", 2), ("concat_dim: 0", 0)])
def test_forward_and_backward(make_layer, blob_of, params, axis):
    shapes = [(2, 3, 4), (2, 3, 4)]
    shapes[1] = tuple(5 if i == axis else d for i, d in enumerate(shapes[1]))
    a, b = gaussian(shapes[0]), gaussian(shapes[1], 2)
    bottom, top = [blob_of(a), blob_of(b)], Blob()
    layer = make_layer(f'name: "cat" type: "Concat" concat_param {{ {params} }}')
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    expected = np.concatenate([a, b], axis=axis).astype(np.float32)
    np.testing.assert_array_equal(top.cpu_data(), expected)
    top.mutable_cpu_diff()[...] = expected * 2
    layer.backward([top], [True, True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), 2 * a.astype(np.float32))
    np.testing.assert_array_equal(bottom[1].cpu_diff(), 2 * b.astype(np.float32))


def test_single_bottom_shares_memory(make_layer, blob_of):
    bottom, top = [blob_of(gaussian((2, 3)))], Blob()
    layer = make_layer('name: "cat" type: "Concat"')
    layer.setup(bottom, [top])
    bottom[0].mutable_cpu_data()[0, 0] = 42
    assert top.cpu_data()[0, 0] == 42


@pytest.mark.parametrize("params", ["", "axis: 0"])
def test_gradient(make_layer, blob_of, params):
    bottom = [blob_of(gaussian((2, 3, 2))), blob_of(gaussian((2, 3, 2), 2))]
    layer = make_layer(f'name: "cat" type: "Concat" concat_param {{ {params} }}')
    GradientChecker(1e-2, 1e-2).check_gradient(layer, bottom, [Blob()])


def test_gradient_single_bottom(make_layer, blob_of):
    bottom = [blob_of(gaussian((2, 3, 2)))]
    layer = make_layer('name: "cat" type: "Concat"')
    GradientChecker(1e-2, 1e-2).check_gradient_eltwise(layer, bottom, [Blob()])


def test_shapes_must_agree_off_the_axis(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'cat'.*same shape except along axis 1: bottom 1"):
        make_layer('name: "cat" type: "Concat"').setup(
            [blob_of(gaussian((2, 3, 4))), blob_of(gaussian((2, 3, 5)))], [Blob()])


def test_axis_counts_must_agree(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'cat'.*same number of axes"):
        make_layer('name: "cat" type: "Concat"').setup(
            [blob_of(gaussian((2, 3, 4))), blob_of(gaussian((2, 3)))], [Blob()])


def test_axis_and_concat_dim_are_exclusive(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'cat'.*either concat_param.axis or concat_param.concat_dim"):
        make_layer('name: "cat" type: "Concat" concat_param { axis: 1 concat_dim: 1 }').setup(
            [blob_of(gaussian((2, 3)))], [Blob()])


def test_axis_out_of_range_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'cat'.*concat_param.axis"):
        make_layer('name: "cat" type: "Concat" concat_param { axis: 3 }').setup(
            [blob_of(gaussian((2, 3))), blob_of(gaussian((2, 3)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu('name: "cat" type: "Concat"', [gaussian((2, 3, 4)), gaussian((2, 1, 4), 2)])
