"""Pad: the golden case, CONSTANT / REPLICATE / REFLECT against numpy (inisis' reflection from the padded
row itself included), cropping with four negative pads, the true gradient, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def pad_text(params: str) -> str:
    """A Pad layer with this pad_param text."""
    return f"name: 'p' type: 'Pad' bottom: 'x' top: 'y' pad_param {{ {params} }}"


def pads(u, d, left, r):
    """pad_param text for the four pads."""
    return f"pad_u: {u} pad_d: {d} pad_l: {left} pad_r: {r}"


def run(run_layer, bottom, params):
    """The layer and its top after setup and forward."""
    return run_layer(pad_text(params), [bottom])


def test_golden(golden_case):
    assert check_layer_case(golden_case("pad_reflect")) == []


@pytest.mark.parametrize("widths", [(2, 1, 2, 3), (0, 0, 0, 0), (3, 0, 1, 4), (1, 3, 0, 2)])
@pytest.mark.parametrize(("mode", "numpy_mode"), [("CONSTANT", "constant"), ("REPLICATE", "edge"),
                                                  ("REFLECT", "reflect")])
def test_modes_against_numpy(run_layer, gaussian, widths, mode, numpy_mode):
    bottom = gaussian((2, 3, 4, 5))
    _, top = run(run_layer, bottom, f"pad_type: {mode} {pads(*widths)} pad_value: 1.5")
    u, d, left, r = widths
    extra = {"constant_values": 1.5} if mode == "CONSTANT" else {}
    want = np.pad(bottom.cpu_data(), ((0, 0), (0, 0), (u, d), (left, r)), numpy_mode, **extra)
    np.testing.assert_array_equal(top.cpu_data(), want)


def test_reflect_reaches_into_the_filled_left_pad(run_layer, blob_of):
    """inisis reflects the right pad off the row already padded on the left: [x2 x1 | x0 x1 x2 | x1 x0 x1]."""
    _, top = run(run_layer, blob_of(np.array([[[[0, 1, 2]]]], np.float32)),
                 f"pad_type: REFLECT {pads(0, 0, 2, 3)}")
    assert top.cpu_data().ravel().tolist() == [2, 1, 0, 1, 2, 1, 0, 1]


def test_four_negative_pads_crop(run_layer, gaussian):
    bottom = gaussian((1, 2, 6, 7))
    _, top = run(run_layer, bottom, f"pad_type: REFLECT {pads(-1, -2, -3, -1)}")
    np.testing.assert_array_equal(top.cpu_data(), bottom.cpu_data()[:, :, 1:4, 3:6])


@pytest.mark.parametrize("params", [f"pad_type: CONSTANT {pads(1, 2, 0, 1)}",
                                    f"pad_type: REPLICATE {pads(2, 1, 3, 1)}",
                                    f"pad_type: REFLECT {pads(1, 2, 2, 1)}",
                                    pads(-1, -1, -1, -2)])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(pad_text(params))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((1, 2, 3, 4))], [Blob()])


@pytest.mark.parametrize(("params", "shape", "message"), [
    (pads(-1, 0, -1, -1), (1, 1, 4, 4), "negative pads crop only when all four are negative"),
    (f"pad_type: REFLECT {pads(4, 0, 0, 0)}", (1, 1, 4, 4), "pad_param.pad_u \\(4\\) below the input height"),
    (f"pad_type: REFLECT {pads(0, 0, 1, 5)}", (1, 1, 4, 4), "pad_param.pad_r \\(5\\) at most pad_l"),
    (pads(-3, -2, -1, -1), (1, 1, 4, 4), "negative output height"),
    (pads(1, 1, 1, 1), (1, 4, 4), "4 axes"),
])
def test_refusals(run_layer, gaussian, params, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian(shape), params)


def test_refuses_in_place(make_layer, gaussian):
    blob = gaussian((1, 1, 2, 2))
    with pytest.raises(LayerSetupError, match="in-place"):
        make_layer(pad_text(pads(1, 1, 1, 1))).setup([blob], [blob])


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["CONSTANT", "REPLICATE", "REFLECT"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, mode):
    gpu_matches_cpu(pad_text(f"pad_type: {mode} {pads(2, 1, 2, 3)} pad_value: -1"),
                    [gaussian((2, 3, 4, 5)).cpu_data()])
