"""Pooling: golden cases, Caffe's hand-computed tests, a loop reference for MAX/AVE with CEIL/FLOOR and
padding, bit-equality with Caffe's float32 loops (tops, mask, bottom diffs; whole, in blocks of planes and
through per-offset views), stochastic pooling, gradients with Caffe's checker parameters and refusals."""

import math

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker, to_host
from caffe_core.testing.golden import check_layer_case
from caffe_layers_vision import pooling, window_layout

LOWEST = np.finfo(np.float32).min


def pool_text(params: str) -> str:
    """A Pooling layer named 'pool' with this pooling_param text."""
    return f"name: 'pool' type: 'Pooling' pooling_param {{ {params} }}"


def run(make_layer, bottom, params, tops=1, phase=caffe_pb2.TRAIN):
    """The Pooling layer and its tops after setup and forward on `bottom`."""
    layer = make_layer(pool_text(params), phase)
    top = [Blob() for _ in range(tops)]
    layer.setup([bottom], top)
    layer.forward([bottom], top)
    return layer, top


def pooled_sizes(shape, kernel, stride, pad, floor):
    """Caffe's pooled height and width."""
    rounding = math.floor if floor else math.ceil
    sizes = []
    for size, k, s, p in zip(shape[2:], kernel, stride, pad, strict=True):
        out = int(rounding((size + 2 * p - k) / s)) + 1
        if any(pad) and (out - 1) * s >= size + p:
            out -= 1
        sizes.append(out)
    return sizes


def reference_pool(x, kernel, stride, pad, method, floor=False):
    """Caffe's PoolingLayer loops: window clipped to the padded extent (AVE divisor), then to the image."""
    num, channels, height, width = x.shape
    pooled = pooled_sizes(x.shape, kernel, stride, pad, floor)
    out = np.zeros((num, channels, *pooled))
    for ph in range(pooled[0]):
        for pw in range(pooled[1]):
            hstart, wstart = ph * stride[0] - pad[0], pw * stride[1] - pad[1]
            hend, wend = min(hstart + kernel[0], height + pad[0]), min(wstart + kernel[1], width + pad[1])
            size = (hend - hstart) * (wend - wstart)
            window = x[:, :, max(hstart, 0): min(hend, height), max(wstart, 0): min(wend, width)]
            if method == "MAX":
                out[:, :, ph, pw] = window.max(axis=(2, 3))
            else:
                out[:, :, ph, pw] = window.sum(axis=(2, 3)) / size
    return out


@pytest.mark.parametrize("case", ["pool_max", "pool_ave"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


@pytest.mark.parametrize(("params", "shape"), [
    ("kernel_size: 3 stride: 2", (3, 2)),
    ("pool: AVE kernel_size: 3 stride: 2 pad: 1", (4, 3)),
    ("global_pooling: true", (1, 1)),
    ("kernel_size: 2 stride: 2 round_mode: FLOOR", (3, 2)),
    ("kernel_size: 2 stride: 2", (3, 3)),
])
def test_setup_shapes(make_layer, gaussian, params, shape):
    _, (top,) = run(make_layer, gaussian((2, 3, 6, 5)), params)
    assert top.shape == (2, 3, *shape)


def test_padding_either_axis_drops_a_last_window_on_both(make_layer, gaussian):
    """Caffe drops a last window when either pad is set: rows ceil(4/3)+1 = 3, the third starts at 6 >= 5."""
    _, (top,) = run(make_layer, gaussian((1, 1, 5, 5)), "kernel_h: 1 kernel_w: 3 stride_h: 3 stride_w: 1 "
                                                         "pad_h: 0 pad_w: 1")
    assert top.shape == (1, 1, 2, 5)


def test_unpadded_windows_past_the_input_are_empty(make_layer, blob_of):
    """k 1, s 2 on 4x4: CEIL gives 3 windows a side, the third starts at 4; Caffe gives -FLT_MAX, mask -1."""
    bottom = blob_of(np.arange(16).reshape(1, 1, 4, 4))
    layer, (top, mask) = run(make_layer, bottom, "kernel_size: 1 stride: 2", tops=2)
    lowest = np.finfo(np.float32).min
    np.testing.assert_array_equal(top.cpu_data()[0, 0], [[0, 2, lowest], [8, 10, lowest], [lowest] * 3])
    np.testing.assert_array_equal(mask.cpu_data()[0, 0], [[0, 2, -1], [8, 10, -1], [-1, -1, -1]])
    want = np.zeros((4, 4))
    want[::2, ::2] = 1
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top, mask], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff()[0, 0], want)
    maskless, (top,) = run(make_layer, bottom, "kernel_size: 1 stride: 2")
    top.mutable_cpu_diff()[...] = 1
    bottom.mutable_cpu_diff()[...] = 7
    maskless.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff()[0, 0], want)


def test_a_mask_edited_to_point_outside_its_window(make_layer, blob_of, device_mode):
    """Caffe's CPU loop adds a window's diff at whatever its mask says; its GPU kernel only looks for a
    window's mask inside that window, so there an entry pointing elsewhere routes nothing."""
    bottom = blob_of(np.arange(16).reshape(1, 1, 4, 4))
    layer, (top, mask) = run(make_layer, bottom, "kernel_size: 2 stride: 2", tops=2)
    mask.mutable_cpu_data()[0, 0] = [[15, 0], [13, 15]]  # the first row's entries point outside their windows
    top.mutable_cpu_diff()[0, 0] = [[1, 2], [4, 8]]
    layer.backward([top, mask], [True], [bottom])
    want = np.zeros(16)
    want[[13, 15]] = [4, 8]
    if device_mode == "cpu":
        want[[0, 15]] = [2, 1 + 8]
    np.testing.assert_array_equal(bottom.cpu_diff().reshape(-1), want)


def test_mask_after_reshaping_to_a_new_input_size(make_layer, blob_of):
    """The mask top is h * W + w within each plane for the input size of the forward that wrote it."""
    rng = np.random.default_rng(7)
    layer = make_layer(pool_text("kernel_size: 2 stride: 2"))
    top = [Blob(), Blob()]
    for shape in ((1, 3, 4, 4), (1, 3, 6, 6)):
        x = rng.permutation(math.prod(shape)).reshape(shape).astype(np.float32)
        bottom = blob_of(x)
        if shape[2] == 4:
            layer.setup([bottom], top)
        else:
            layer.reshape([bottom], top)
        layer.forward([bottom], top)
        want_top, want_mask, _ = caffe_loops(x, np.zeros(top[0].shape, np.float32), (2, 2), (2, 2), (0, 0),
                                             "MAX")
        np.testing.assert_array_equal(top[0].cpu_data(), want_top)
        np.testing.assert_array_equal(top[1].cpu_data(), want_mask)


def test_last_window_must_start_inside_the_image(make_layer, gaussian):
    """H 5, k 2, s 2, p 1: CEIL gives 4 windows, the last would start at the padding, so 3 remain."""
    _, (top,) = run(make_layer, gaussian((1, 1, 5, 5)), "kernel_size: 2 stride: 2 pad: 1")
    assert top.shape == (1, 1, 3, 3)


def test_forward_max_square_with_mask(make_layer, blob_of):
    """Caffe's TestForwardMaxTopMask (2x2 kernel, stride 1) on [1 2 5 2 3; 9 4 1 4 8; 1 2 5 2 3]."""
    image = np.array([[1, 2, 5, 2, 3], [9, 4, 1, 4, 8], [1, 2, 5, 2, 3]], np.float32)
    bottom = blob_of(np.broadcast_to(image, (2, 2, 3, 5)))
    _, (top, mask) = run(make_layer, bottom, "kernel_size: 2", tops=2)
    np.testing.assert_array_equal(top.cpu_data(), np.broadcast_to([[9, 5, 5, 8], [9, 5, 5, 8]], top.shape))
    np.testing.assert_array_equal(mask.cpu_data(), np.broadcast_to([[5, 2, 2, 9], [5, 12, 12, 9]], top.shape))


def test_forward_max_padded(make_layer, blob_of):
    bottom = blob_of(np.array([[1, 2, 4], [2, 3, 2], [4, 2, 1]], np.float32).reshape(1, 1, 3, 3))
    _, (top,) = run(make_layer, bottom, "kernel_size: 3 stride: 2 pad: 2")
    np.testing.assert_array_equal(top.cpu_data()[0, 0], [[1, 4, 4], [4, 4, 4], [4, 4, 1]])


def test_forward_ave_counts_padding(make_layer, blob_of):
    bottom = blob_of(np.full((1, 1, 3, 3), 2.0))
    _, (top,) = run(make_layer, bottom, "pool: AVE kernel_size: 3 stride: 1 pad: 1")
    want = [[8 / 9, 4 / 3, 8 / 9], [4 / 3, 2, 4 / 3], [8 / 9, 4 / 3, 8 / 9]]
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6)


MAGIC6 = np.array([[35, 1, 6, 26, 19, 24], [3, 32, 7, 21, 23, 25], [31, 9, 2, 22, 27, 20],
                   [8, 28, 33, 17, 10, 15], [30, 5, 34, 12, 14, 16], [4, 36, 29, 13, 18, 11]], np.float32)


@pytest.mark.parametrize(("kernel", "top_values"), [
    ((3, 2), [[35, 32, 26, 27, 27], [32, 33, 33, 27, 27], [31, 34, 34, 27, 27], [36, 36, 34, 18, 18]]),
    ((2, 3), [[35, 32, 26, 26], [32, 32, 27, 27], [33, 33, 33, 27], [34, 34, 34, 17], [36, 36, 34, 18]]),
])
def test_forward_max_rectangular_on_magic6(make_layer, blob_of, kernel, top_values):
    """Caffe's TestForwardMaxRectHigh / RectWide on MATLAB's magic(6)."""
    bottom = blob_of(np.broadcast_to(MAGIC6, (2, 2, 6, 6)))
    _, (top, mask) = run(make_layer, bottom, f"kernel_h: {kernel[0]} kernel_w: {kernel[1]}", tops=2)
    np.testing.assert_array_equal(top.cpu_data()[1, 1], top_values)
    flat = MAGIC6.ravel()
    np.testing.assert_array_equal(flat[mask.cpu_data()[1, 1].astype(int)], top_values)


@pytest.mark.parametrize("method", ["MAX", "AVE"])
@pytest.mark.parametrize(("kernel", "stride", "pad", "floor"), [
    ((3, 3), (2, 2), (0, 0), False), ((3, 2), (2, 1), (1, 1), False), ((2, 2), (2, 2), (1, 0), False),
    ((3, 3), (2, 2), (1, 1), True), ((4, 3), (3, 2), (2, 1), False), ((2, 3), (3, 3), (0, 0), True),
    ((8, 7), (3, 2), (0, 0), False),
])
def test_forward_against_reference(make_layer, gaussian, method, kernel, stride, pad, floor):
    bottom = gaussian((2, 3, 7, 6))
    params = (f"pool: {method} kernel_h: {kernel[0]} kernel_w: {kernel[1]} stride_h: {stride[0]} "
              f"stride_w: {stride[1]} pad_h: {pad[0]} pad_w: {pad[1]} "
              f"round_mode: {'FLOOR' if floor else 'CEIL'}")
    _, (top,) = run(make_layer, bottom, params)
    want = reference_pool(bottom.cpu_data().astype(np.float64), kernel, stride, pad, method, floor)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-5, atol=1e-6)


def caffe_loops(x, top_diff, kernel, stride, pad, method, floor=False):
    """Caffe's CPU loops in float32 and in its order, over every (n, c) at once: top, mask (MAX) and the
    bottom diff from `top_diff`."""
    num, channels, height, width = x.shape
    pooled = pooled_sizes(x.shape, kernel, stride, pad, floor)
    top = np.empty((num, channels, *pooled), np.float32)
    mask = np.full(top.shape, -1, np.int64)
    bottom_diff = np.zeros(x.shape, np.float32)
    for ph in range(pooled[0]):
        for pw in range(pooled[1]):
            hstart, wstart = ph * stride[0] - pad[0], pw * stride[1] - pad[1]
            if method == "MAX":
                rows = range(max(hstart, 0), min(hstart + kernel[0], height))
                cols = range(max(wstart, 0), min(wstart + kernel[1], width))
                best = np.full((num, channels), LOWEST, np.float32)
                chosen = np.full((num, channels), -1)
                for h in rows:
                    for w in cols:
                        better = x[:, :, h, w] > best
                        best = np.where(better, x[:, :, h, w], best)
                        chosen = np.where(better, h * width + w, chosen)
                top[:, :, ph, pw], mask[:, :, ph, pw] = best, chosen
                continue
            hend, wend = min(hstart + kernel[0], height + pad[0]), min(wstart + kernel[1], width + pad[1])
            size = np.float32((hend - hstart) * (wend - wstart))
            rows, cols = range(max(hstart, 0), min(hend, height)), range(max(wstart, 0), min(wend, width))
            total = np.zeros((num, channels), np.float32)
            for h in rows:
                for w in cols:
                    total += x[:, :, h, w]
            top[:, :, ph, pw] = total / size
            for h in rows:
                for w in cols:
                    bottom_diff[:, :, h, w] += top_diff[:, :, ph, pw] / size
    if method == "MAX":
        planes = bottom_diff.reshape(num * channels, -1)
        for ph in range(pooled[0]):
            for pw in range(pooled[1]):
                chosen = mask[:, :, ph, pw].reshape(-1)
                taken = chosen >= 0
                planes[np.flatnonzero(taken), chosen[taken]] += top_diff[:, :, ph, pw].reshape(-1)[taken]
    return top, (mask if method == "MAX" else None), bottom_diff


def pool_geometry_text(method, kernel, stride, pad, floor):
    """pooling_param text for a method and window geometry."""
    return (f"pool: {method} kernel_h: {kernel[0]} kernel_w: {kernel[1]} stride_h: {stride[0]} "
            f"stride_w: {stride[1]} pad_h: {pad[0]} pad_w: {pad[1]} "
            f"round_mode: {'FLOOR' if floor else 'CEIL'}")


GEOMETRIES = [  # kernel, stride, pad, floor, input shape
    ((3, 3), (2, 2), (0, 0), False, (2, 3, 7, 6)),  # CaffeNet's: overlapping windows, the last overhanging
    ((3, 3), (2, 2), (1, 1), False, (2, 3, 7, 6)),  # padded, CEIL: the last window overhangs the padding
    ((2, 2), (2, 2), (0, 0), False, (2, 3, 7, 6)),  # LeNet's: stride = kernel, every element in one window
    ((3, 3), (1, 1), (1, 1), False, (2, 3, 6, 5)),  # GoogLeNet's 3x3 stride 1 pad 1
    ((2, 2), (1, 1), (0, 0), False, (2, 3, 5, 4)),  # stride 1 unpadded: the input is its own layout
    ((1, 1), (2, 2), (0, 0), False, (2, 3, 5, 4)),  # stride > kernel: elements in no window, empty windows
    ((1, 1), (2, 2), (0, 0), False, (2, 3, 1, 2)),  # as many windows as elements, the second one empty
    ((2, 3), (3, 3), (1, 1), False, (2, 3, 8, 7)),  # stride > kernel, padded
    ((4, 3), (3, 2), (2, 1), False, (2, 3, 7, 6)),
    ((3, 2), (2, 1), (1, 0), True, (2, 3, 7, 6)),
    ((7, 6), (1, 1), (0, 0), False, (2, 3, 7, 6)),  # one window per plane: per-offset views, not flat runs
    ((3, 3), (2, 2), (0, 0), False, (1, 2, 3, 130)),  # element offsets within a window past 255
    ((3, 2), (2, 1), (0, 0), False, (2, 3, 7, 6)),  # unpadded, stride 1 on one axis only: not the identity
    ((3, 3), (3, 3), (1, 1), True, (2, 3, 6, 6)),  # FLOOR, padded: the last row and column are in no window
]


def use_mode(monkeypatch, mode, shape):
    """The input shape for a way of pooling: all planes at once, in blocks of planes (8 planes in blocks of
    3, 3 and 2), or through per-offset views instead of flat runs."""
    if mode == "chunks":
        shape = (shape[0], shape[1] + 1, *shape[2:])
        monkeypatch.setattr(pooling, "CHUNK_BYTES", 4 * shape[2] * shape[3] * 8 / 3)
    elif mode == "views":
        monkeypatch.setattr(window_layout, "FLAT_OVERHEAD_LIMIT", 0)
    return shape


@pytest.mark.parametrize("mode", ["whole", "chunks", "views"])
@pytest.mark.parametrize(("kernel", "stride", "pad", "floor", "shape"), GEOMETRIES)
def test_max_numbers_equal_caffe_loops(make_layer, blob_of, monkeypatch, mode, kernel, stride, pad, floor,
                                       shape):
    """Top, mask and bottom diff (with and without the mask top) bit-equal to Caffe's float32 loops; small
    integers make many ties (the first in scan order wins) and elements chosen by several windows."""
    shape = use_mode(monkeypatch, mode, shape)
    rng = np.random.default_rng(5)
    x = rng.integers(-2, 3, shape).astype(np.float32)
    params = pool_geometry_text("MAX", kernel, stride, pad, floor)
    for tops in (2, 1):
        bottom = blob_of(x)
        layer, top = run(make_layer, bottom, params, tops=tops)
        top_diff = rng.standard_normal(top[0].shape).astype(np.float32)
        want_top, want_mask, want_diff = caffe_loops(x, top_diff, kernel, stride, pad, "MAX", floor)
        np.testing.assert_array_equal(top[0].cpu_data(), want_top)
        if tops == 2:
            np.testing.assert_array_equal(top[1].cpu_data(), want_mask)
        top[0].mutable_cpu_diff()[...] = top_diff
        bottom.mutable_cpu_diff()[...] = 7
        layer.backward(top, [True], [bottom])
        np.testing.assert_array_equal(bottom.cpu_diff(), want_diff)


@pytest.mark.parametrize("mode", ["whole", "chunks", "views"])
@pytest.mark.parametrize(("kernel", "stride", "pad", "floor", "shape"), GEOMETRIES)
def test_max_without_backward_gives_the_same_top(make_layer, blob_of, monkeypatch, mode, kernel, stride, pad,
                                                 floor, shape):
    """A layer no backward will run pools the maxima alone, and its top is still Caffe's, -FLT_MAX for a
    window of nothing above it and never NaN."""
    shape = use_mode(monkeypatch, mode, shape)
    rng = np.random.default_rng(7)
    x = rng.integers(-2, 3, shape).astype(np.float32)
    x.reshape(-1)[::5] = np.nan
    x.reshape(-1)[1::7] = -np.inf
    layer = make_layer(pool_text(pool_geometry_text("MAX", kernel, stride, pad, floor)), caffe_pb2.TEST)
    layer.backward_needed = False
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    want_top, _, _ = caffe_loops(x, np.zeros(top.shape, np.float32), kernel, stride, pad, "MAX", floor)
    assert layer.argmax is None
    np.testing.assert_array_equal(top.cpu_data(), want_top)


@pytest.mark.parametrize("mode", ["whole", "chunks", "views"])
@pytest.mark.parametrize(("kernel", "stride", "pad", "floor", "shape"), GEOMETRIES)
def test_ave_numbers_equal_caffe_loops(make_layer, blob_of, monkeypatch, mode, kernel, stride, pad, floor,
                                       shape):
    """Top and bottom diff bit-equal to Caffe's float32 loops: the same sums in the same order."""
    shape = use_mode(monkeypatch, mode, shape)
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(np.float32)
    bottom = blob_of(x)
    # Caffe divides the zero sum of a window past the input by its zero size.
    with np.errstate(invalid="ignore", divide="ignore"):
        layer, (top,) = run(make_layer, bottom, pool_geometry_text("AVE", kernel, stride, pad, floor))
        top_diff = rng.standard_normal(top.shape).astype(np.float32)
        want_top, _, want_diff = caffe_loops(x, top_diff, kernel, stride, pad, "AVE", floor)
        top.mutable_cpu_diff()[...] = top_diff
        bottom.mutable_cpu_diff()[...] = 7
        layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(top.cpu_data(), want_top)
    np.testing.assert_array_equal(bottom.cpu_diff(), want_diff)


def test_max_never_takes_nan_or_nothing_above_lowest(make_layer, blob_of):
    """As Caffe, an element is taken only when greater than the running max, which starts at -FLT_MAX: NaN
    never is, and a window of -inf gives -FLT_MAX, mask -1 and no gradient."""
    image = np.array([[np.nan, 1, -np.inf, -np.inf], [2, np.nan, -np.inf, LOWEST]], np.float32)
    bottom = blob_of(image.reshape(1, 1, 2, 4))
    for tops in (2, 1):
        layer, top = run(make_layer, bottom, "kernel_size: 2 stride: 2", tops=tops)
        np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[2, LOWEST]])
        if tops == 2:
            np.testing.assert_array_equal(top[1].cpu_data()[0, 0], [[4, -1]])
        top[0].mutable_cpu_diff()[...] = [[[[3, 5]]]]
        layer.backward(top, [True], [bottom])
        np.testing.assert_array_equal(bottom.cpu_diff()[0, 0], [[0, 0, 0, 0], [3, 0, 0, 0]])


def test_global_pooling(make_layer, gaussian):
    bottom = gaussian((2, 3, 4, 5))
    _, (top,) = run(make_layer, bottom, "pool: AVE global_pooling: true")
    np.testing.assert_allclose(top.cpu_data()[..., 0, 0], bottom.cpu_data().mean(axis=(2, 3)), rtol=1e-5)


@pytest.mark.parametrize(("kernel_h", "kernel_w"), [(3, 3), (3, 4), (4, 3), (4, 4)])
def test_gradient_max(make_layer, gaussian, kernel_h, kernel_w):
    layer = make_layer(pool_text(f"kernel_h: {kernel_h} kernel_w: {kernel_w} stride: 2 pad: 1"))
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 6, 5))], [Blob()])


def test_gradient_max_top_mask(make_layer, gaussian):
    layer = make_layer(pool_text("kernel_size: 3 stride: 2"))
    GradientChecker(1e-4, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 6, 5))], [Blob(), Blob()])


@pytest.mark.parametrize("params", ["kernel_size: 2 stride: 2", "kernel_size: 3 stride: 1 pad: 1",
                                    "pool: AVE kernel_size: 2 stride: 2",
                                    "pool: AVE kernel_size: 3 stride: 1 pad: 1"])
def test_gradient_stride_equal_to_kernel_and_stride_1(make_layer, gaussian, params):
    layer = make_layer(pool_text(params))
    stepsize = 1e-2 if "AVE" in params else 1e-4
    GradientChecker(stepsize, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 6, 5))], [Blob()])


@pytest.mark.parametrize("pad", [0, 2])
def test_gradient_ave(make_layer, gaussian, pad):
    layer = make_layer(pool_text(f"pool: AVE kernel_size: 3 stride: 2 pad: {pad}"))
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 6, 5))], [Blob()])


@pytest.mark.parametrize(("method", "stepsize"), [("MAX", 1e-4), ("AVE", 1e-2)])
def test_gradient_kernel_overhanging_by_less_than_the_stride(make_layer, gaussian, method, stepsize):
    """Kernel 4, stride 2 on 3x3: ceil(-1/2) + 1 = 1 window, clipped to the input, as Caffe."""
    layer = make_layer(pool_text(f"pool: {method} kernel_size: 4 stride: 2"))
    GradientChecker(stepsize, 1e-2).check_gradient_exhaustive(layer, [gaussian((1, 2, 3, 3))], [Blob()])


def uniform_blob(blob_of, shape):
    """Positive values in [0.1, 1), as Caffe's stochastic pooling tests use."""
    return blob_of(np.random.default_rng(1701).uniform(0.1, 1.0, shape))


def test_stochastic_train_picks_a_window_value(make_layer, blob_of):
    bottom = uniform_blob(blob_of, (2, 3, 6, 5))
    layer, (top,) = run(make_layer, bottom, "pool: STOCHASTIC kernel_size: 3 stride: 2")
    x = bottom.cpu_data()
    for ph in range(top.shape[2]):
        for pw in range(top.shape[3]):
            window = x[:, :, 2 * ph: 2 * ph + 3, 2 * pw: 2 * pw + 3].reshape(2, 3, -1)
            assert np.all(np.any(window == top.cpu_data()[:, :, ph, pw, None], axis=-1))
    # The kept argmax is a flat index into the whole input, the element backward routes through.
    np.testing.assert_array_equal(x.reshape(-1)[to_host(layer.argmax)], top.cpu_data().reshape(6, 3, 2))


def test_stochastic_test_weights_by_probability(make_layer, blob_of):
    bottom = uniform_blob(blob_of, (2, 3, 6, 5))
    _, (top,) = run(make_layer, bottom, "pool: STOCHASTIC kernel_size: 3 stride: 2", phase=caffe_pb2.TEST)
    x = bottom.cpu_data().astype(np.float64)
    for ph in range(top.shape[2]):
        for pw in range(top.shape[3]):
            window = x[:, :, 2 * ph: 2 * ph + 3, 2 * pw: 2 * pw + 3]
            want = (window ** 2).sum(axis=(2, 3)) / window.sum(axis=(2, 3))
            np.testing.assert_allclose(top.cpu_data()[:, :, ph, pw], want, rtol=1e-5)


def test_stochastic_draws_follow_the_seed(make_layer, blob_of):
    bottom = uniform_blob(blob_of, (2, 3, 6, 5))
    _, (first,) = run(make_layer, bottom, "pool: STOCHASTIC kernel_size: 3 stride: 2")
    again = first.cpu_data().copy()
    runtime.set_random_seed(1701)
    _, (second,) = run(make_layer, bottom, "pool: STOCHASTIC kernel_size: 3 stride: 2")
    np.testing.assert_array_equal(second.cpu_data(), again)


def test_stochastic_train_never_picks_a_zero_before_the_window_mass(make_layer, blob_of):
    """Caffe draws thres = u * (the window's whole sum), u > 0, and takes the first element whose running sum
    reaches it: with only the last element in scan order nonzero, every draw takes that element."""
    x = np.zeros((1, 2, 4, 4), np.float32)
    x[:, :, 1::2, 1::2] = np.arange(1, 9).reshape(1, 2, 2, 2)
    bottom = blob_of(x)
    layer, (top,) = run(make_layer, bottom, "pool: STOCHASTIC kernel_size: 2 stride: 2")
    np.testing.assert_array_equal(top.cpu_data(), x[:, :, 1::2, 1::2])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    np.testing.assert_array_equal(bottom.cpu_diff(), x > 0)


def test_gradient_stochastic(make_layer, blob_of):
    layer = make_layer(pool_text("pool: STOCHASTIC kernel_size: 3 stride: 2"))
    bottom = uniform_blob(blob_of, (2, 3, 6, 5))
    GradientChecker(1e-4, 1e-2).check_gradient(layer, [bottom], [Blob()])


@pytest.mark.parametrize(("params", "message"), [
    ("global_pooling: true kernel_size: 2", "filter size cannot be specified"),
    ("global_pooling: true stride: 2", "only pad = 0 and stride = 1"),
    ("global_pooling: true pad: 1", "only pad = 0 and stride = 1"),
    ("kernel_size: 2 pad: 2", r"pad \[2, 2\] must be smaller than the kernel"),
    ("kernel_size: 9", "kernel height 9 is larger than the padded input height 6"),
    ("kernel_size: 7 stride: 2 round_mode: FLOOR", r"height 6 \+ 2 \* 0: no window fits \(stride 2\)"),
    ("kernel_size: 3 kernel_h: 3 kernel_w: 3", "kernel_size OR kernel_h and kernel_w"),
    ("kernel_h: 3", "both kernel_h and kernel_w are required"),
    ("kernel_size: 3 pad: 1 pad_h: 1 pad_w: 1", "pad is pad OR pad_h and pad_w"),
    ("kernel_size: 3 stride_h: 2", "stride is stride OR stride_h and stride_w"),
    ("pool: STOCHASTIC kernel_size: 3 pad: 1", "padding is implemented only for average and max"),
    ("kernel_size: 3 stride: 0", "stride dimensions cannot be zero"),
])
def test_refuses_bad_configuration(make_layer, gaussian, params, message):
    layer = make_layer(pool_text(params))
    with pytest.raises(LayerSetupError, match=message) as info:
        layer.setup([gaussian((2, 3, 6, 5))], [Blob()])
    assert "layer 'pool' (type Pooling)" in str(info.value)


def test_refuses_a_mask_top_unless_max(make_layer, gaussian):
    layer = make_layer(pool_text("pool: AVE kernel_size: 2"))
    with pytest.raises(CaffeError, match="at most 1 top"):
        layer.setup([gaussian((2, 3, 6, 5))], [Blob(), Blob()])


def test_refuses_non_4d_input(make_layer, gaussian):
    layer = make_layer(pool_text("kernel_size: 2"))
    with pytest.raises(LayerSetupError, match="must have 4 axes"):
        layer.setup([gaussian((2, 3, 6))], [Blob()])



@pytest.mark.parametrize("params", [
    "pool: MAX kernel_size: 3 stride: 2",
    "pool: MAX kernel_size: 2 stride: 2",
    "pool: AVE kernel_size: 3 stride: 2 pad: 1",
])
def test_blocks_of_planes_on_host_threads_give_the_one_thread_numbers(make_layer, gaussian, host_threads,
                                                                      params):
    results = []
    for count in (1, 3):
        host_threads(count)
        bottom = gaussian((2, 5, 9, 8), seed=3)
        layer, (top,) = run(make_layer, bottom, params)
        assert len(layer.chunks) >= count
        top.mutable_cpu_diff()[...] = np.random.default_rng(4).standard_normal(top.shape)
        layer.backward([top], [True], [bottom])
        results.append((top.cpu_data().copy(), bottom.cpu_diff().copy()))
    for one, split in zip(*results, strict=True):
        np.testing.assert_array_equal(split, one)
