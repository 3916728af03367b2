"""Tile: golden case, forward against numpy, gradient, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("tile")) == []


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_forward(make_layer, blob_of, axis):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    layer = make_layer(f'name: "t" type: "Tile" tile_param {{ axis: {axis} tiles: 3 }}')
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    reps = [1, 1, 1]
    reps[axis] = 3
    np.testing.assert_array_equal(top.cpu_data(), np.tile(x, reps))


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gradient(make_layer, blob_of, axis):
    x = np.random.default_rng(1701).standard_normal((2, 3, 2))
    layer = make_layer(f'name: "t" type: "Tile" tile_param {{ axis: {axis} tiles: 3 }}')
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [blob_of(x)], [Blob()])


@pytest.mark.parametrize(("param", "message"), [("axis: 1", "tiles"), ("tiles: 0", "positive"),
                                                ("tiles: 2 axis: 3", "axis")])
def test_refusals(make_layer, blob_of, param, message):
    layer = make_layer(f'name: "t" type: "Tile" tile_param {{ {param} }}')
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([blob_of(np.zeros((2, 3, 4)))], [Blob()])
