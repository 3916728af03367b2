"""Reduction: golden case, every operation with axis and coeff against numpy, gradients."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

REFERENCE = {
    "SUM": lambda x: x.sum(axis=1),
    "ASUM": lambda x: np.abs(x).sum(axis=1),
    "SUMSQ": lambda x: (x * x).sum(axis=1),
    "MEAN": lambda x: x.mean(axis=1),
}


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("reduction")) == []


@pytest.mark.parametrize("op", sorted(REFERENCE))
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("coeff", [1.0, 2.3])
def test_forward(make_layer, blob_of, op, axis, coeff):
    x = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    layer = make_layer(f'name: "r" type: "Reduction" '
                       f'reduction_param {{ operation: {op} axis: {axis} coeff: {coeff} }}')
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    start = axis % 3
    assert top.shape == x.shape[:start]
    layer.forward([bottom], [top])
    expected = coeff * REFERENCE[op](x.reshape(int(np.prod(x.shape[:start])), -1))
    np.testing.assert_allclose(top.cpu_data().ravel(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", sorted(REFERENCE))
@pytest.mark.parametrize(("axis", "coeff"), [(0, 1.0), (1, 2.3)])
def test_gradient(make_layer, blob_of, op, axis, coeff):
    x = np.random.default_rng(1701).standard_normal((2, 3, 4))
    layer = make_layer(f'name: "r" type: "Reduction" '
                       f'reduction_param {{ operation: {op} axis: {axis} coeff: {coeff} }}')
    GradientChecker(1e-2, 2e-3).check_gradient_exhaustive(layer, [blob_of(x)], [Blob()])


def test_bad_axis(make_layer, blob_of):
    layer = make_layer('name: "r" type: "Reduction" reduction_param { axis: 3 }')
    with pytest.raises(LayerSetupError, match="'r'.*reduction_param.axis: axis 3 out of range"):
        layer.setup([blob_of(np.zeros((2, 3)))], [Blob()])
