"""Interp: PSPNet's output-size rules and their precedence, cropping, forward and backward against a loop
transcription of interp2 (float32, same order), PSPNet's gradient test, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.exactness import assert_caffe_equal

F32 = np.float32


def interp_text(params: str) -> str:
    """An Interp layer with this interp_param text."""
    return f"name: 'i' type: 'Interp' bottom: 'x' top: 'y' interp_param {{ {params} }}"


def run(run_layer, bottom, params):
    """The layer and its top after setup and forward."""
    return run_layer(interp_text(params), [bottom])


def taps(src, dst):
    """interp2's (h1, h1p, h0lambda, h1lambda) per output index, in float32."""
    ratio = F32(src - 1) / F32(dst - 1) if dst > 1 else F32(0)
    out = []
    for i in range(dst):
        coord = F32(ratio * F32(i))
        first = int(coord)
        lam = F32(coord - F32(first))
        out.append((first, 1 if first < src - 1 else 0, F32(F32(1) - lam), lam))
    return out


def reference(x, out_h, out_w, crop=0, height=None, width=None):
    """interp2 as loops on the crop starting at (crop, crop) of size height x width."""
    height = height or x.shape[2] - crop
    width = width or x.shape[3] - crop
    y = np.zeros((*x.shape[:2], out_h, out_w), F32)
    for i, (h, hp, h0, h1) in enumerate(taps(height, out_h)):
        for j, (w, wp, w0, w1) in enumerate(taps(width, out_w)):
            p = x[:, :, crop + h: crop + h + hp + 1, crop + w: crop + w + wp + 1]
            p00, p01, p10, p11 = p[:, :, 0, 0], p[:, :, 0, wp], p[:, :, hp, 0], p[:, :, hp, wp]
            y[:, :, i, j] = h0 * (w0 * p00 + w1 * p01) + h1 * (w0 * p10 + w1 * p11)
    return y


def reference_backward(dy, shape, crop=0, height=None, width=None):
    """interp2_backward as loops: adds each output's diff times its four weights, in order."""
    height = height or shape[2] - crop
    width = width or shape[3] - crop
    dx = np.zeros(shape, F32)
    for i, (h, hp, h0, h1) in enumerate(taps(height, dy.shape[2])):
        for j, (w, wp, w0, w1) in enumerate(taps(width, dy.shape[3])):
            g = dy[:, :, i, j]
            for dh, dw, weight in ((0, 0, h0 * w0), (0, wp, h0 * w1), (hp, 0, h1 * w0), (hp, wp, h1 * w1)):
                dx[:, :, crop + h + dh, crop + w + dw] += F32(weight) * g
    return dx


@pytest.mark.parametrize(("params", "size"), [
    ("height: 11 width: 9", (11, 9)),  # PSPNet's TestSetup
    ("shrink_factor: 2", (3, 3)),  # (6 - 1) / 2 + 1, (5 - 1) / 2 + 1
    ("zoom_factor: 3", (16, 13)),  # 6 + 5 * 2, 5 + 4 * 2
    ("shrink_factor: 2 zoom_factor: 3", (7, 7)),
    ("shrink_factor: 2 height: 11 width: 9", (3, 3)),  # a lone factor wins over height and width
    ("shrink_factor: 2 zoom_factor: 3 height: 11 width: 9", (11, 9)),  # height and width win over both
    ("zoom_factor: 2 pad_beg: -1 pad_end: -1", (7, 5)),  # on the 4 x 3 crop
])
def test_output_size(run_layer, gaussian, params, size):
    _, top = run(run_layer, gaussian((2, 3, 6, 5)), params)
    assert top.shape == (2, 3, *size)


@pytest.mark.parametrize(("params", "out", "crop"), [
    ("height: 11 width: 9", (11, 9), (0, None, None)),
    ("height: 3 width: 2", (3, 2), (0, None, None)),
    ("height: 1 width: 7", (1, 7), (0, None, None)),
    ("zoom_factor: 2 pad_beg: -1 pad_end: -1", (7, 5), (1, 4, 3)),
    ("height: 5 width: 4 pad_beg: -2 pad_end: 0", (5, 4), (2, 4, 3)),
])
def test_forward_and_backward_against_interp2(run_layer, gaussian, params, out, crop):
    bottom = gaussian((2, 3, 6, 5))
    layer, top = run(run_layer, bottom, params)
    assert_caffe_equal(top.cpu_data(), reference(bottom.cpu_data(), *out, *crop))
    dy = np.random.default_rng(2).normal(size=top.shape).astype(F32)
    top.mutable_cpu_diff()[...] = dy
    bottom.mutable_cpu_diff()[...] = 9
    layer.backward([top], [True], [bottom])
    assert_caffe_equal(bottom.cpu_diff(), reference_backward(dy, bottom.shape, *crop))


def test_same_size_copies_the_crop(run_layer, gaussian):
    bottom = gaussian((1, 2, 5, 5))
    layer, top = run(run_layer, bottom, "height: 3 width: 3 pad_beg: -1 pad_end: -1")
    np.testing.assert_array_equal(top.cpu_data(), bottom.cpu_data()[:, :, 1:4, 1:4])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    want = np.zeros((1, 2, 5, 5))
    want[:, :, 1:4, 1:4] = 1
    np.testing.assert_array_equal(bottom.cpu_diff(), want)


def test_gradient(make_layer, gaussian):
    """PSPNet's TestGradient checker (1e-2, 1e-2), upsampling as its 6 x 5 to 11 x 9, on a smaller bottom."""
    layer = make_layer(interp_text("height: 5 width: 4"))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 3, 3))], [Blob()])


def test_gradient_with_crop(make_layer, gaussian):
    layer = make_layer(interp_text("height: 2 width: 4 pad_beg: -1 pad_end: 0"))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 4, 3))], [Blob()])


@pytest.mark.parametrize(("params", "message"), [
    ("pad_beg: 1 height: 3 width: 3", "pad_beg must not be positive"),
    ("pad_end: 2 height: 3 width: 3", "pad_end must not be positive"),
    ("shrink_factor: 0", "shrink_factor must be positive"),
    ("zoom_factor: 0", "zoom_factor must be positive"),
    ("height: 3", "needs shrink_factor, zoom_factor, both of them, or height and width"),
    ("", "needs shrink_factor"),
    ("height: 0 width: 3", "output size must be positive"),
    ("height: 3 width: 3 pad_beg: -3 pad_end: -3", "cropped input size must be positive"),
])
def test_refusals(run_layer, gaussian, params, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian((1, 1, 6, 5)), params)


def test_refuses_three_axes(run_layer, gaussian):
    with pytest.raises(LayerSetupError, match="4 axes"):
        run(run_layer, gaussian((1, 6, 5)), "height: 3 width: 3")


@pytest.mark.gpu
@pytest.mark.parametrize("params", ["height: 11 width: 9", "zoom_factor: 2 pad_beg: -1 pad_end: -1"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, params):
    gpu_matches_cpu(interp_text(params), [gaussian((2, 3, 6, 5)).cpu_data()], rtol=1e-5, atol=1e-5)
