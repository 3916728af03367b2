"""SPP: golden case, Caffe's shape tests, levels equal to plain pooling, gradient (1e-4, 1e-2), refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def spp_text(params: str) -> str:
    """An SPP layer named 'spp' with this spp_param text."""
    return f"name: 'spp' type: 'SPP' spp_param {{ {params} }}"


def test_golden(golden_case):
    assert check_layer_case(golden_case("spp")) == []


@pytest.mark.parametrize(("shape", "height", "top_shape"), [
    ((2, 3, 9, 8), 3, (2, 3 * (1 + 4 + 16))),
    ((2, 3, 2, 4), 2, (2, 3 * (1 + 4))),
    ((2, 3, 9, 8), 1, (2, 3, 1, 1)),
])
def test_setup_shapes(make_layer, gaussian, shape, height, top_shape):
    layer, top = make_layer(spp_text(f"pyramid_height: {height}")), Blob()
    layer.setup([gaussian(shape)], [top])
    assert top.shape == top_shape


@pytest.mark.parametrize("method", ["MAX", "AVE"])
def test_levels_equal_plain_pooling(make_layer, gaussian, method):
    bottom, top = gaussian((2, 3, 9, 8)), Blob()
    layer = make_layer(spp_text(f"pyramid_height: 3 pool: {method}"))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    start = 0
    for level, (kernel, pad) in enumerate([((9, 8), (0, 0)), ((5, 4), (1, 0)), ((3, 2), (2, 0))]):
        pool, pooled = make_layer(f"name: 'p' type: 'Pooling' pooling_param {{ pool: {method} "
                                  f"kernel_h: {kernel[0]} kernel_w: {kernel[1]} stride_h: {kernel[0]} "
                                  f"stride_w: {kernel[1]} pad_h: {pad[0]} pad_w: {pad[1]} }}"), Blob()
        pool.setup([bottom], [pooled])
        pool.forward([bottom], [pooled])
        width = 3 * 4 ** level
        got = top.cpu_data()[:, start: start + width]
        np.testing.assert_array_equal(got, pooled.cpu_data().reshape(2, -1))
        start += width


def test_follows_a_new_input_size(make_layer, gaussian):
    layer, top = make_layer(spp_text("pyramid_height: 2")), Blob()
    layer.setup([gaussian((2, 3, 9, 8))], [top])
    bigger = gaussian((1, 3, 12, 11))
    layer.reshape([bigger], [top])
    layer.forward([bigger], [top])
    assert top.shape == (1, 15)
    np.testing.assert_allclose(top.cpu_data()[0, :3], bigger.cpu_data()[0].max(axis=(1, 2)))


@pytest.mark.parametrize("params", ["pyramid_height: 3", "pyramid_height: 2 pool: AVE", "pyramid_height: 1"])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(spp_text(params))
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 4, 4))], [Blob()])


def test_refuses_zero_height(make_layer, gaussian):
    with pytest.raises(LayerSetupError, match="layer 'spp'.*pyramid_height must be at least 1"):
        make_layer(spp_text("pyramid_height: 0")).setup([gaussian((2, 3, 6, 5))], [Blob()])


def test_refuses_a_level_finer_than_the_input(make_layer, gaussian):
    """5 columns in 4 bins need pad 2 with kernel 2, which pooling refuses (as in Caffe)."""
    with pytest.raises(LayerSetupError, match=r"layer 'spp/level2' \(type Pooling\): pad"):
        make_layer(spp_text("pyramid_height: 3")).setup([gaussian((2, 3, 6, 5))], [Blob()])
