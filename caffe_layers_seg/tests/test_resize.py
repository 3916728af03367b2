"""Resize: the golden case, forward and backward against a loop transcription of inisis' util_img
(float32, same order), is_pyramid_test sizes, the gradient, refusals and CPU/GPU parity."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.exactness import assert_caffe_equal
from caffe_core.testing.golden import check_layer_case

F32 = np.float32


def resize_text(params: str) -> str:
    """A Resize layer with this resize_param text."""
    return f"name: 'r' type: 'Resize' bottom: 'x' top: 'y' resize_param {{ {params} }}"


def run(run_layer, bottom, params):
    """The layer and its top after setup and forward."""
    return run_layer(resize_text(params), [bottom])


def rules(src_h, src_w, dst_h, dst_w):
    """Per output position: [(input row, input column, weight)] for the taps inisis keeps, in its order."""
    scale_h, scale_w = F32(src_h) / F32(dst_h), F32(src_w) / F32(dst_w)
    out = []
    for i in range(dst_h):
        fh = F32(i) * scale_h
        h = math.floor(fh)
        fh = F32(fh - F32(h))
        for j in range(dst_w):
            fw = F32(j) * scale_w
            w = math.floor(fw)
            fw = F32(fw - F32(w))
            wh0, wh1, ww0, ww1 = abs(F32(1) - fh), abs(fh), abs(F32(1) - fw), abs(fw)
            taps = [(h, w, wh0 * ww0)]
            if w + 1 < src_w:
                taps.append((h, w + 1, wh0 * ww1))
            if h + 1 < src_h:
                taps.append((h + 1, w, wh1 * ww0))
            if w + 1 < src_w and h + 1 < src_h:
                taps.append((h + 1, w + 1, wh1 * ww1))
            out.append(taps)
    return out


def reference(x, dst_h, dst_w):
    """inisis' BiLinearResizeMat_cpu."""
    y = np.zeros((*x.shape[:2], dst_h * dst_w), F32)
    for k, taps in enumerate(rules(*x.shape[2:], dst_h, dst_w)):
        for h, w, weight in taps:
            y[:, :, k] += weight * x[:, :, h, w]
    return y.reshape(*x.shape[:2], dst_h, dst_w)


def reference_backward(dy, shape):
    """inisis' Backward_cpu loop."""
    dx = np.zeros(shape, F32)
    flat = dy.reshape(*dy.shape[:2], -1)
    for k, taps in enumerate(rules(*shape[2:], *dy.shape[2:])):
        for h, w, weight in taps:
            dx[:, :, h, w] += flat[:, :, k] * weight
    return dx


def test_golden(golden_case):
    assert check_layer_case(golden_case("resize_up_x2")) == []


@pytest.mark.parametrize(("dst_h", "dst_w"), [(8, 10), (2, 3), (4, 5), (7, 3), (1, 1)])
def test_forward_and_backward_against_inisis_loops(run_layer, gaussian, dst_h, dst_w):
    bottom = gaussian((2, 3, 4, 5))
    layer, top = run(run_layer, bottom, f"height: {dst_h} width: {dst_w}")
    assert_caffe_equal(top.cpu_data(), reference(bottom.cpu_data(), dst_h, dst_w))
    dy = np.random.default_rng(4).normal(size=top.shape).astype(F32)
    top.mutable_cpu_diff()[...] = dy
    bottom.mutable_cpu_diff()[...] = 7
    layer.backward([top], [True], [bottom])
    assert_caffe_equal(bottom.cpu_diff(), reference_backward(dy, bottom.shape))


def test_last_column_past_the_edge_is_halved(run_layer, blob_of):
    """2x up: the last output column falls half-way past the last input column, whose weight is dropped."""
    _, top = run(run_layer, blob_of(np.ones((1, 1, 2, 2))), "height: 4 width: 4")
    np.testing.assert_array_equal(top.cpu_data()[0, 0], [[1, 1, 1, 0.5]] * 3 + [[0.5, 0.5, 0.5, 0.25]])


def test_pyramid_sizes_follow_the_input(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((1, 2, 4, 5)), "is_pyramid_test: true out_height_scale: 1.5 "
                                                         "out_width_scale: 0.5")
    assert top.shape == (1, 2, 6, 2)
    layer.reshape([gaussian((1, 2, 6, 6))], [top])
    assert top.shape == (1, 2, 9, 3)


def test_gradient(make_layer, gaussian):
    layer = make_layer(resize_text("height: 5 width: 3"))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 3, 4))], [Blob()])


@pytest.mark.parametrize(("params", "message"), [
    ("height: 4", "resize_param.width is required without is_pyramid_test"),
    ("width: 4", "resize_param.height is required"),
    ("is_pyramid_test: true out_height_scale: 2", "out_width_scale is required with is_pyramid_test"),
    ("height: 0 width: 4", "output height must be positive"),
    ("is_pyramid_test: true out_height_scale: 2 out_width_scale: 0.1", "output width must be positive"),
])
def test_refusals(run_layer, gaussian, params, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian((1, 1, 4, 5)), params)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian):
    gpu_matches_cpu(resize_text("height: 8 width: 7"), [gaussian((2, 3, 4, 5)).cpu_data()], atol=1e-5)
