"""BilinearInterpolate: the golden case, both coordinate rules against a loop transcription of inisis'
forward (float32), the output-size settings, the true gradient, refusals and CPU/GPU parity."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

F32 = np.float32


def bi_text(params: str) -> str:
    """A BilinearInterpolate layer with this bilinear_interpolate_param text."""
    return (f"name: 'b' type: 'BilinearInterpolate' bottom: 'x' top: 'y' "
            f"bilinear_interpolate_param {{ {params} }}")


def run(run_layer, bottom, params):
    """The layer and its top after setup and forward."""
    return run_layer(bi_text(params), [bottom])


def coordinate(i, src, dst, align):
    """inisis' source coordinate of output index i, clamped to [0, src - 1]."""
    if align:
        c = F32(F32(src - 1) / F32(dst - 1)) * F32(i)
    else:
        c = F32(float(F32(src) / F32(dst)) * (i + 0.5) - 0.5)
    return F32(min(max(c, F32(0)), F32(src - 1)))


def reference(x, dst_h, dst_w, align):
    """inisis' forward loop, one output at a time."""
    src_h, src_w = x.shape[2:]
    y = np.zeros((*x.shape[:2], dst_h, dst_w), F32)
    for i in range(dst_h):
        h = coordinate(i, src_h, dst_h, align)
        h0 = min(max(math.floor(h), 0), src_h - 2)
        for j in range(dst_w):
            w = coordinate(j, src_w, dst_w, align)
            w0 = min(max(math.floor(w), 0), src_w - 2)
            q = x[:, :, h0: h0 + 2, w0: w0 + 2]
            r0 = (F32(w0 + 1) - w) * q[:, :, 0, 0] + (w - F32(w0)) * q[:, :, 0, 1]
            r1 = (F32(w0 + 1) - w) * q[:, :, 1, 0] + (w - F32(w0)) * q[:, :, 1, 1]
            y[:, :, i, j] = (F32(h0 + 1) - h) * r0 + (h - F32(h0)) * r1
    return y


def test_golden(golden_case):
    assert check_layer_case(golden_case("bilinear_align_corners")) == []


@pytest.mark.parametrize("align", [True, False])
@pytest.mark.parametrize(("dst_h", "dst_w"), [(7, 9), (2, 3), (4, 5), (9, 2)])
def test_forward_against_inisis_loop(run_layer, gaussian, align, dst_h, dst_w):
    bottom = gaussian((2, 3, 4, 5))
    _, top = run(run_layer, bottom, f"dst_h: {dst_h} dst_w: {dst_w} align_corners: {str(align).lower()}")
    np.testing.assert_array_equal(top.cpu_data(), reference(bottom.cpu_data(), dst_h, dst_w, align))


@pytest.mark.parametrize(("params", "size"), [
    ("dst_h: 7", (7, 5)),  # a missing dst_w keeps the input's
    ("dst_w: 3", (4, 3)),
    ("scale_factor: 1.5", (6, 7)),  # int(4 * 1.5), int(5 * 1.5)
    ("scale_factor: 0.5 align_corners: false", (2, 2)),
])
def test_output_size(run_layer, gaussian, params, size):
    _, top = run(run_layer, gaussian((1, 2, 4, 5)), params)
    assert top.shape == (1, 2, *size)


def test_output_size_is_fixed_at_setup(run_layer, gaussian):
    layer, top = run(run_layer, gaussian((1, 2, 4, 5)), "scale_factor: 2")
    layer.reshape([gaussian((1, 2, 3, 3))], [top])
    assert top.shape == (1, 2, 8, 10)


@pytest.mark.parametrize("params", ["dst_h: 5 dst_w: 7", "dst_h: 3 dst_w: 2 align_corners: false"])
def test_gradient(make_layer, gaussian, params):
    layer = make_layer(bi_text(params))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((1, 2, 3, 4))], [Blob()])


@pytest.mark.parametrize(("params", "shape", "message"), [
    ("dst_h: 3 scale_factor: 2", (1, 1, 4, 4), "exactly one of them"),
    ("align_corners: false", (1, 1, 4, 4), "exactly one of them"),
    ("dst_h: 0 dst_w: 3", (1, 1, 4, 4), "dst_h is 0"),
    ("scale_factor: 0.1", (1, 1, 4, 4), "dst_h is 0"),
    ("dst_h: 1 dst_w: 3", (1, 1, 4, 4), "align_corners needs an output of at least 2"),
    ("dst_h: 3 dst_w: 3", (1, 1, 1, 4), "at least 2 x 2"),
    ("dst_h: 3 dst_w: 3", (1, 4, 4), "4 axes"),
])
def test_refusals(run_layer, gaussian, params, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian(shape), params)


@pytest.mark.gpu
@pytest.mark.parametrize("align", ["true", "false"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, align):
    gpu_matches_cpu(bi_text(f"dst_h: 7 dst_w: 9 align_corners: {align}"), [gaussian((2, 3, 4, 5)).cpu_data()])
