"""Crop: golden case, Caffe's shape tests for every axis and offset form, values, gradient and refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def crop_text(params: str) -> str:
    """A Crop layer named 'crop' with this crop_param text."""
    return f"name: 'crop' type: 'Crop' crop_param {{ {params} }}"


def crop(make_layer, bottom, reference, params):
    """The Crop layer and its top after setup and forward on (bottom, reference)."""
    layer, top = make_layer(crop_text(params)), Blob()
    layer.setup([bottom, reference], [top])
    layer.forward([bottom, reference], [top])
    return layer, top


def test_golden(golden_case):
    assert check_layer_case(golden_case("crop")) == []


@pytest.mark.parametrize(("params", "window"), [
    ("", (slice(None), slice(None), slice(0, 2), slice(0, 3))),
    ("axis: 0 offset: 0", (slice(0, 1), slice(0, 2), slice(0, 2), slice(0, 3))),
    ("axis: 1 offset: 1 offset: 2 offset: 1", (slice(None), slice(1, 3), slice(2, 4), slice(1, 4))),
    ("axis: -1 offset: 2", (slice(None), slice(None), slice(None), slice(2, 5))),
    ("axis: 2 offset: 3", (slice(None), slice(None), slice(3, 5), slice(3, 6))),
])
def test_forward_takes_the_window(make_layer, gaussian, params, window):
    bottom = gaussian((2, 4, 5, 6))
    reference = Blob((1, 2, 2, 3))
    _, top = crop(make_layer, bottom, reference, params)
    want = bottom.cpu_data()[window]
    assert top.shape == want.shape
    np.testing.assert_array_equal(top.cpu_data(), want)


def test_gradient(make_layer, gaussian):
    layer = make_layer(crop_text("axis: 1 offset: 1 offset: 0 offset: 2"))
    bottom, reference = gaussian((2, 3, 4, 5)), gaussian((2, 2, 3, 2), seed=2)
    checker = GradientChecker(1e-2, 1e-3)
    checker.check_gradient_exhaustive(layer, [bottom, reference], [Blob()], check_bottom=0)


def test_backward_leaves_the_reference_alone(make_layer, gaussian):
    bottom, reference = gaussian((2, 3, 4, 5)), gaussian((2, 3, 2, 2), seed=2)
    reference.mutable_cpu_diff()[...] = 7
    layer, top = crop(make_layer, bottom, reference, "offset: 1")
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True, True], [bottom, reference])
    assert (reference.cpu_diff() == 7).all()
    assert bottom.cpu_diff().sum() == top.count


@pytest.mark.parametrize(("params", "reference", "message"), [
    ("axis: 1 offset: 1 offset: 1", (2, 3, 2, 2), "number of offset values specified"),
    ("offset: 3", (2, 3, 2, 2), "invalid crop parameters in dimension 2"),
    ("axis: 4", (2, 3, 2, 2), "axis"),
    ("", (2, 3, 2), "as many axes"),
])
def test_refuses_bad_configuration(make_layer, gaussian, params, reference, message):
    with pytest.raises(LayerSetupError, match=message) as info:
        make_layer(crop_text(params)).setup([gaussian((2, 3, 4, 5)), Blob(reference)], [Blob()])
    assert "layer 'crop' (type Crop)" in str(info.value)
