"""Reshape: golden case, shape inference (0 and -1, axis, num_axes), refusals, shared memory."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case):
    assert check_layer_case(golden_case("reshape")) == []


@pytest.mark.parametrize(("param", "expected"), [
    ("shape { dim: 6 dim: 20 }", (6, 20)),
    ("shape { dim: 0 dim: -1 }", (2, 60)),
    ("shape { dim: 0 dim: 0 dim: 0 dim: 0 }", (2, 3, 4, 5)),
    ("shape { dim: -1 dim: 5 }", (24, 5)),
    ("axis: 1 num_axes: 2 shape { dim: 12 }", (2, 12, 5)),
    ("axis: -1 shape { dim: 1 dim: 1 }", (2, 3, 4, 5, 1, 1)),
    ("axis: 0 num_axes: 0 shape { dim: 1 }", (1, 2, 3, 4, 5)),
    ("axis: 2 num_axes: 1 shape { dim: 2 dim: -1 }", (2, 3, 2, 2, 5)),
    ("axis: 1 num_axes: -1 shape { dim: 0 dim: -1 }", (2, 3, 20)),
])
def test_shapes(make_layer, blob_of, param, expected):
    layer = make_layer(f'name: "r" type: "Reshape" reshape_param {{ {param} }}')
    bottom = blob_of(np.arange(120).reshape(2, 3, 4, 5))
    top = Blob()
    layer.setup([bottom], [top])
    assert top.shape == expected
    layer.forward([bottom], [top])
    np.testing.assert_array_equal(top.cpu_data().ravel(), np.arange(120))


def test_shares_data_and_diff(make_layer, blob_of):
    layer = make_layer('name: "r" type: "Reshape" reshape_param { shape { dim: -1 } }')
    bottom, top = blob_of(np.ones((2, 3))), Blob()
    layer.setup([bottom], [top])
    assert top.data_memory is bottom.data_memory
    assert top.diff_memory is bottom.diff_memory
    top.mutable_cpu_diff()[...] = 7
    np.testing.assert_array_equal(bottom.cpu_diff(), np.full((2, 3), 7))


@pytest.mark.parametrize(("param", "message"), [
    ("shape { dim: -1 dim: -1 }", "multiple|-1 dims"),
    ("shape { dim: 7 dim: -1 }", "divisible"),
    ("shape { dim: 7 }", "count must match"),
    ("shape { dim: 0 dim: 0 dim: 0 dim: 0 dim: 0 }", "no axis"),
    ("shape { dim: -2 }", "below -1"),
    ("axis: 5 shape { dim: 1 }", "axis"),
    ("axis: 1 num_axes: 4 shape { dim: 1 }", "num_axes"),
])
def test_refusals(make_layer, blob_of, param, message):
    layer = make_layer(f'name: "bad" type: "Reshape" reshape_param {{ {param} }}')
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([blob_of(np.zeros((2, 3, 4, 5)))], [Blob()])


def test_gradient(make_layer, blob_of):
    rng = np.random.default_rng(1701)
    layer = make_layer('name: "r" type: "Reshape" reshape_param { shape { dim: 0 dim: 2 dim: -1 } }')
    bottom = blob_of(rng.standard_normal((2, 4, 3)))
    GradientChecker(1e-2, 1e-2).check_gradient_eltwise(layer, [bottom], [Blob()])
