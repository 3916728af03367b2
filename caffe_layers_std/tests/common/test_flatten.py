"""Flatten: golden numbers, axis ranges, shared memory, gradient, in-place refusal."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def gaussian(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape)


def test_golden(golden_case):
    assert check_layer_case(golden_case("flatten")) == []


@pytest.mark.parametrize(("params", "shape"), [
    ("", (2, 60)),
    ("axis: 2", (2, 3, 20)),
    ("end_axis: 2", (2, 12, 5)),
    ("axis: 0 end_axis: -2", (24, 5)),
    ("axis: -1", (2, 3, 4, 5)),
])
def test_shapes(make_layer, blob_of, params, shape):
    top = Blob()
    make_layer(f'name: "flat" type: "Flatten" flatten_param {{ {params} }}').setup(
        [blob_of(gaussian((2, 3, 4, 5)))], [top])
    assert top.shape == shape


def test_top_shares_data_and_bottom_shares_diff(make_layer, blob_of):
    x = gaussian((2, 3, 4)).astype(np.float32)
    bottom, top = [blob_of(x)], Blob()
    layer = make_layer('name: "flat" type: "Flatten"')
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    np.testing.assert_array_equal(top.cpu_data(), x.reshape(2, 12))
    top.mutable_cpu_diff()[...] = 5
    layer.backward([top], [True], bottom)
    np.testing.assert_array_equal(bottom[0].cpu_diff(), np.full((2, 3, 4), 5.0))


def test_gradient(make_layer, blob_of):
    bottom = [blob_of(gaussian((2, 3, 2, 2)))]
    GradientChecker(1e-2, 1e-2).check_gradient_eltwise(make_layer('name: "flat" type: "Flatten"'), bottom,
                                                       [Blob()])


def test_in_place_is_refused(make_layer, blob_of):
    blob = blob_of(gaussian((2, 3)))
    with pytest.raises(LayerSetupError, match="'flat'.*in-place"):
        make_layer('name: "flat" type: "Flatten"').setup([blob], [blob])


def test_end_axis_before_axis_is_refused(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="'flat'.*end_axis \\(1\\) comes before axis \\(2\\)"):
        make_layer('name: "flat" type: "Flatten" flatten_param { axis: 2 end_axis: 1 }').setup(
            [blob_of(gaussian((2, 3, 4)))], [Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu('name: "flat" type: "Flatten"', [gaussian((2, 3, 4))])
