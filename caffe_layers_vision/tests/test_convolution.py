"""Convolution: golden case, Caffe's shape tests, forward against a loop reference (2-D, 3-D, 0-D, dilated,
grouped, depthwise, 1x1), gradients with Caffe's checker parameters, buffer reuse and refusals."""

import itertools

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_layers_vision import base_convolution
from caffe_layers_vision.im2col_ops import im2col
from caffe_layers_vision.workspace import shared_scratch

GAUSSIAN_FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"


def conv_text(params: str) -> str:
    """A Convolution layer named 'conv' with this convolution_param text."""
    return f"name: 'conv' type: 'Convolution' convolution_param {{ {params} }}"


def reference_conv(x, weights, bias, stride, pad, dilation, group):
    """Caffe's caffe_conv from its tests: explicit loops over outputs, N spatial axes."""
    num, channels, *spatial = x.shape
    outputs, kernel = weights.shape[0], weights.shape[2:]
    padded = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out_spatial = [(s + 2 * p - (d * (k - 1) + 1)) // st + 1
                   for s, p, d, k, st in zip(spatial, pad, dilation, kernel, stride, strict=True)]
    in_group, out_group = channels // group, outputs // group
    out = np.zeros((num, outputs, *out_spatial))
    for n, m in itertools.product(range(num), range(outputs)):
        g = m // out_group
        for position in itertools.product(*(range(o) for o in out_spatial)):
            window = tuple(slice(o * st, o * st + d * (k - 1) + 1, d)
                           for o, st, d, k in zip(position, stride, dilation, kernel, strict=True))
            patch = padded[(n, slice(g * in_group, (g + 1) * in_group), *window)]
            out[(n, m, *position)] = (patch * weights[m]).sum() + (bias[m] if bias is not None else 0.0)
    return out


def reference_bottom_diff(top_diff, weights, stride, pad, in_spatial):
    """Caffe's backward for one group: W^T times the top diff, each column entry added onto the input element
    it was read from (col2im); entries read from the padding are dropped."""
    num, outputs, *out_spatial = top_diff.shape
    kernel = weights.shape[2:]
    padded = np.zeros((num, weights.shape[1], *(s + 2 * p for s, p in zip(in_spatial, pad, strict=True))))
    for n, m in itertools.product(range(num), range(outputs)):
        for position in itertools.product(*(range(o) for o in out_spatial)):
            steps = zip(position, stride, kernel, strict=True)
            window = tuple(slice(o * st, o * st + k) for o, st, k in steps)
            padded[(n, slice(None), *window)] += top_diff[(n, m, *position)] * weights[m]
    inside = (slice(p, p + s) for s, p in zip(in_spatial, pad, strict=True))
    return padded[(slice(None), slice(None), *inside)]


def run_against_reference(make_layer, bottom, params, stride, pad, dilation, group, axes=2):
    """Sets up and runs a Convolution with Gaussian weights and checks its top against reference_conv."""
    layer = make_layer(conv_text(f"{params} {GAUSSIAN_FILLERS}"))
    top = Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    bias = layer.blobs[1].cpu_data() if len(layer.blobs) > 1 else None
    want = reference_conv(bottom.cpu_data(), layer.blobs[0].cpu_data(), bias, (stride,) * axes, (pad,) * axes,
                          (dilation,) * axes, group)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-4)
    return layer, top


def test_golden(golden_case):
    assert check_layer_case(golden_case("conv")) == []


def test_setup_shapes(make_layer, gaussian):
    bottom = gaussian((2, 3, 6, 4))
    layer, top = make_layer(conv_text("num_output: 4 kernel_size: 3 stride: 2")), Blob()
    layer.setup([bottom], [top])
    assert top.shape == (2, 4, 2, 1)
    assert layer.blobs[0].shape == (4, 3, 3, 3) and layer.blobs[1].shape == (4,)
    grouped, top = make_layer(conv_text("num_output: 3 kernel_size: 3 stride: 2 group: 3")), Blob()
    grouped.setup([bottom], [top])
    assert top.shape == (2, 3, 2, 1)
    assert grouped.blobs[0].shape == (3, 1, 3, 3)


@pytest.mark.parametrize(("shape", "params", "stride", "pad", "dilation", "group"), [
    ((2, 3, 6, 4), "num_output: 4 kernel_size: 3 stride: 2", 2, 0, 1, 1),
    ((2, 3, 6, 4), "num_output: 4 kernel_size: 3 stride: 1 pad: 1", 1, 1, 1, 1),
    ((2, 3, 8, 7), "num_output: 4 kernel_size: 3 dilation: 2", 1, 0, 2, 1),
    ((2, 3, 6, 4), "num_output: 3 kernel_size: 3 stride: 2 group: 3", 2, 0, 1, 3),
    ((2, 4, 6, 5), "num_output: 4 kernel_size: 3 pad: 1 group: 4", 1, 1, 1, 4),
    ((2, 6, 5, 4), "num_output: 4 kernel_size: 2 stride: 2 pad: 1 group: 2 bias_term: false", 2, 1, 1, 2),
    ((2, 3, 6, 4), "num_output: 4 kernel_size: 1", 1, 0, 1, 1),
    ((1, 3, 6, 4), "num_output: 4 kernel_size: 1", 1, 0, 1, 1),
    ((1, 3, 7, 5), "num_output: 4 kernel_size: 3 stride: 2 pad: 1", 2, 1, 1, 1),
])
def test_forward_2d(make_layer, gaussian, shape, params, stride, pad, dilation, group):
    run_against_reference(make_layer, gaussian(shape), params, stride, pad, dilation, group)


@pytest.mark.parametrize(("params", "dilation"), [
    ("num_output: 4 kernel_size: 3 stride: 2", 1),
    ("num_output: 4 kernel_size: 3 dilation: 2", 2),
])
def test_forward_3d(make_layer, gaussian, params, dilation):
    stride = 2 if "stride" in params else 1
    run_against_reference(make_layer, gaussian((2, 3, 5, 6, 7)), params, stride, 0, dilation, 1, axes=3)


def test_rectangular_kernel_and_stride(make_layer, gaussian):
    bottom = gaussian((2, 3, 7, 6))
    layer, top = make_layer(conv_text(f"num_output: 2 kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 "
                                      f"pad_h: 1 pad_w: 0 {GAUSSIAN_FILLERS}")), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    x = np.pad(bottom.cpu_data().astype(np.float64), [(0, 0), (0, 0), (1, 1), (0, 0)])
    w, b = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    want = reference_conv(x, w, b, (2, 1), (0, 0), (1, 1), 1)
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("shape", "params"), [
    ((2, 2, 2, 3), "kernel_size: 3 stride: 2"),
    ((2, 2, 2, 3), "kernel_size: 3 stride_h: 2 stride_w: 1"),
    ((1, 2, 4, 2), "kernel_h: 2 kernel_w: 3 stride: 2 pad_h: 1 pad_w: 0"),
])
def test_kernel_overhanging_by_less_than_the_stride(make_layer, gaussian, shape, params):
    """Caffe's (in + 2 pad - kernel) / stride rounds toward zero: one window, zero past the padded input."""
    bottom, top = gaussian(shape), Blob()
    layer = make_layer(conv_text(f"num_output: 2 {params} {GAUSSIAN_FILLERS}"))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    geometry = layer.params
    widened = geometry.padded_shape(shape[2:], top.shape[2:])
    far = [(0, w - s - 2 * p) for s, p, w in zip(shape[2:], geometry.pad, widened, strict=True)]
    x = np.pad(bottom.cpu_data(), [(0, 0), (0, 0)] + far)
    weights, bias = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    want = reference_conv(x, weights, bias, geometry.stride, geometry.pad, geometry.dilation, 1)
    assert top.shape == want.shape
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-4)
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [bottom], [top])


@pytest.mark.parametrize(("shape", "params", "stride", "pad"), [
    ((2, 3, 2, 2), "num_output: 2 kernel_size: 2 stride: 2 pad: 1", 2, 1),  # stride 2, output as the input
    ((2, 3, 3, 4), "num_output: 2 kernel_size: 1 pad: 1", 1, 1),  # stride 1, pad >= kernel: output larger
    ((2, 3, 3, 3), "num_output: 3 kernel_size: 2 pad: 2", 1, 2),
])
def test_bottom_diff_against_reference(make_layer, gaussian, shape, params, stride, pad):
    """Outputs that only stride 1 and an output as large as the input would make a convolution of the top
    diff: Caffe's col2im sums, windows overlapping the padding included."""
    bottom, top = gaussian(shape), Blob()
    layer = make_layer(conv_text(f"{params} {GAUSSIAN_FILLERS}"))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top_diff = gaussian(top.shape, seed=3).cpu_data()
    top.mutable_cpu_diff()[...] = top_diff
    layer.backward([top], [True], [bottom])
    want = reference_bottom_diff(top_diff.astype(np.float64), layer.blobs[0].cpu_data(), (stride,) * 2,
                                 (pad,) * 2, shape[2:])
    np.testing.assert_allclose(bottom.cpu_diff(), want, rtol=1e-4, atol=1e-4)


def test_0d_convolution_is_a_linear_map_per_position(make_layer, gaussian):
    bottom = gaussian((2, 3, 6, 4))
    layer, top = make_layer(conv_text(f"num_output: 3 axis: 3 {GAUSSIAN_FILLERS}")), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    assert top.shape == (2, 3, 6, 3)
    w, b = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    assert w.shape == (3, 4)
    np.testing.assert_allclose(top.cpu_data(), bottom.cpu_data() @ w.T + b, rtol=1e-4, atol=1e-5)


def test_sobel_equals_two_separable_passes(make_layer, gaussian):
    """Caffe's TestSobelConvolution: a 3x3 Sobel kernel equals [1 2 1] (3x1, stride_h 2) then [-1 0 1]."""
    bottom = gaussian((2, 3, 6, 4))
    sobel, top = make_layer(conv_text("num_output: 1 kernel_size: 3 stride: 2 bias_term: false")), Blob()
    sobel.setup([bottom], [top])
    sobel.blobs[0].mutable_cpu_data()[...] = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], np.float32)
    sobel.forward([bottom], [top])
    rows, middle = make_layer(conv_text("num_output: 1 kernel_h: 3 kernel_w: 1 stride_h: 2 stride_w: 1 "
                                        "bias_term: false")), Blob()
    rows.setup([bottom], [middle])
    rows.blobs[0].mutable_cpu_data()[...] = np.array([1, 2, 1], np.float32).reshape(3, 1)
    rows.forward([bottom], [middle])
    cols, result = make_layer(conv_text("num_output: 1 kernel_h: 1 kernel_w: 3 stride_h: 1 stride_w: 2 "
                                        "bias_term: false")), Blob()
    cols.setup([middle], [result])
    cols.blobs[0].mutable_cpu_data()[...] = np.array([-1, 0, 1], np.float32)
    cols.forward([middle], [result])
    np.testing.assert_allclose(top.cpu_data(), result.cpu_data(), rtol=1e-4, atol=1e-4)


def test_two_bottoms_share_the_weights(make_layer, gaussian):
    first, second = gaussian((2, 3, 6, 4), seed=1), gaussian((2, 3, 6, 4), seed=2)
    layer, tops = make_layer(conv_text(f"num_output: 2 kernel_size: 3 {GAUSSIAN_FILLERS}")), [Blob(), Blob()]
    layer.setup([first, second], tops)
    layer.forward([first, second], tops)
    w, b = layer.blobs[0].cpu_data(), layer.blobs[1].cpu_data()
    for bottom, top in zip((first, second), tops, strict=True):
        want = reference_conv(bottom.cpu_data(), w, b, (1, 1), (0, 0), (1, 1), 1)
        np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("shape", "params", "two_bottoms"), [
    ((2, 3, 6, 4), "num_output: 2 kernel_size: 3 stride: 2", True),
    ((2, 2, 5, 4), "num_output: 2 kernel_size: 2 dilation: 2", False),
    ((2, 3, 3, 4, 3), "num_output: 2 kernel_size: 2 stride: 2", False),
    ((2, 3, 4, 3), "num_output: 2 kernel_size: 1", False),
    ((2, 6, 4, 3), "num_output: 3 kernel_size: 3 stride: 2 pad: 1 group: 3", False),
])
def test_gradient(make_layer, gaussian, shape, params, two_bottoms):
    bottoms = [gaussian(shape, seed=1)] + ([gaussian(shape, seed=2)] if two_bottoms else [])
    tops = [Blob() for _ in bottoms]
    layer = make_layer(conv_text(f"{params} {GAUSSIAN_FILLERS}"))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, bottoms, tops)


def test_buffers_are_reused_across_calls(make_layer, gaussian):
    bottom, top = gaussian((3, 4, 9, 8)), Blob()
    layer = make_layer(conv_text(f"num_output: 6 kernel_size: 3 pad: 1 group: 2 {GAUSSIAN_FILLERS}"))
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True], [bottom])
    held, shared = layer.workspace.nbytes(), shared_scratch().nbytes()
    assert held <= layer.blobs[0].count * 4
    for _ in range(3):
        layer.forward([bottom], [top])
        layer.backward([top], [True], [bottom])
    assert layer.workspace.nbytes() == held
    assert shared_scratch().nbytes() == shared
    smaller = Blob((1, 4, 5, 5))
    layer.reshape([smaller], [top])
    layer.forward([smaller], [top])
    assert layer.workspace.nbytes() == held


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_no_phase_keeps_columns_on_the_layer(make_layer, gaussian, phase):
    """The columns live in the thread's shared scratch, whatever the phase."""
    text = conv_text(f"num_output: 2 kernel_size: 3 stride: 2 {GAUSSIAN_FILLERS}")
    layer = make_layer(text, phase)
    bottom, top = gaussian((2, 3, 6, 4)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    assert layer.workspace.nbytes() == 0
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [bottom], [top])


@pytest.mark.parametrize(("params", "message"), [
    ("num_output: 4 kernel_size: 7", "larger than the padded input"),
    ("num_output: 4 kernel_size: 3 dilation: 4", "larger than the padded input"),
    ("num_output: 3 kernel_size: 3 group: 2", "channels are not divisible by group 2"),
    ("num_output: 5 kernel_size: 3 group: 3", "num_output 5 is not a multiple of group 3"),
    ("num_output: 0 kernel_size: 3", "num_output must be greater than 0"),
    ("num_output: 4 kernel_size: 3 kernel_h: 3 kernel_w: 3", "either kernel_size or kernel_h/kernel_w"),
    ("num_output: 4 kernel_size: 3 stride: 2 stride_h: 1 stride_w: 1", "either stride or stride_h/stride_w"),
    ("num_output: 4 kernel_size: 3 kernel_size: 3 kernel_size: 3", "kernel_size must be specified once"),
    ("num_output: 4", "kernel_size must be specified once"),
    ("num_output: 4 kernel_size: 0", "filter dimensions must be nonzero"),
    ("num_output: 4 kernel_size: 3 stride: 0", "stride dimensions must be nonzero"),
    ("num_output: 4 kernel_size: 3 axis: 4", "axis"),
])
def test_refuses_bad_configuration(make_layer, gaussian, params, message):
    layer = make_layer(conv_text(params))
    with pytest.raises(LayerSetupError, match=message) as info:
        layer.setup([gaussian((2, 3, 6, 4))], [Blob()])
    assert "layer 'conv' (type Convolution)" in str(info.value)


def test_kernel_h_needs_two_spatial_axes(make_layer, gaussian):
    layer = make_layer(conv_text("num_output: 2 kernel_h: 2 kernel_w: 2"))
    with pytest.raises(LayerSetupError, match="only be used for 2D convolution"):
        layer.setup([gaussian((2, 3, 4, 4, 4))], [Blob()])


@pytest.mark.parametrize("params", [
    "num_output: 4 kernel_size: 3 pad: 1 group: 2",  # batch innermost; input gradient by col2im
    "num_output: 3 kernel_size: 3 stride: 2",  # batch outermost: each thread its own images
    "num_output: 3 kernel_size: 3 stride: 2 pad: 1",  # the same, through each thread's part of a padded copy
    "num_output: 2 kernel_size: 3 pad: 1",  # input gradient as a convolution
])
def test_host_threads_give_the_one_thread_numbers(make_layer, gaussian, host_threads, params):
    results = []
    for count in (1, 3):
        host_threads(count)
        bottom, top = gaussian((3, 4, 7, 6)), Blob()
        layer = make_layer(conv_text(f"{params} {GAUSSIAN_FILLERS}"))
        layer.setup([bottom], [top])
        for seed, blob in enumerate(layer.blobs):
            blob.mutable_cpu_data()[...] = gaussian(blob.shape, seed=seed).cpu_data()
        layer.forward([bottom], [top])
        top.mutable_cpu_diff()[...] = gaussian(top.shape, seed=3).cpu_data()
        layer.backward([top], [True], [bottom])
        results.append((top.cpu_data().copy(), bottom.cpu_diff().copy(), layer.blobs[0].cpu_diff().copy(),
                        layer.blobs[1].cpu_diff().copy()))
    for one, split in zip(*results, strict=True):
        np.testing.assert_array_equal(split, one)


REUSE_GEOMETRIES = [
    "num_output: 4 kernel_size: 3 pad: 1 group: 2",  # batch innermost; input gradient by col2im
    "num_output: 3 kernel_size: 3 stride: 2 pad: 1",  # batch outermost, from a padded copy
    "num_output: 2 kernel_size: 3 pad: 1",  # input gradient as a convolution
]


def conv_gradients(make_layer, gaussian, params, data=None, between=None):
    """Forward of a seeded Convolution on `data` (else Gaussian), `between(layer, bottom)`, then backward; its
    diffs and how often backward ran im2col."""
    bottom, top = gaussian((3, 4, 7, 6)), Blob()
    if data is not None:
        bottom.mutable_cpu_data()[...] = data
    layer = make_layer(conv_text(f"{params} {GAUSSIAN_FILLERS}"))
    layer.setup([bottom], [top])
    for seed, blob in enumerate(layer.blobs):
        blob.mutable_cpu_data()[...] = gaussian(blob.shape, seed=seed).cpu_data()
    layer.forward([bottom], [top])
    if between is not None:
        between(layer, bottom)
    top.mutable_cpu_diff()[...] = gaussian(top.shape, seed=3).cpu_data()
    calls = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(base_convolution, "im2col", lambda *args: calls.append(args) or im2col(*args))
        layer.backward([top], [True], [bottom])
    return (bottom.cpu_diff().copy(), layer.blobs[0].cpu_diff().copy()), len(calls)


def forward_another_convolution(make_layer, gaussian):
    """A `between` step: another Convolution's forward, which carves the shared scratch afresh."""
    def step(layer, bottom):
        other, top = make_layer(conv_text("num_output: 5 kernel_size: 2")), Blob()
        other.setup([gaussian((2, 3, 5, 5), seed=9)], [top])
        other.forward([gaussian((2, 3, 5, 5), seed=9)], [top])
    return step


@pytest.mark.parametrize("params", REUSE_GEOMETRIES)
def test_backward_takes_the_columns_forward_left_with_the_same_numbers(make_layer, gaussian, host_threads,
                                                                       params):
    host_threads(1)
    kept, kept_calls = conv_gradients(make_layer, gaussian, params)
    rebuilt, rebuilt_calls = conv_gradients(make_layer, gaussian, params,
                                            between=forward_another_convolution(make_layer, gaussian))
    assert rebuilt_calls == kept_calls + 1
    for one, other in zip(kept, rebuilt, strict=True):
        np.testing.assert_array_equal(one, other)


@pytest.mark.parametrize("params", REUSE_GEOMETRIES)
def test_backward_rebuilds_the_columns_of_a_bottom_written_since_forward(make_layer, gaussian, host_threads,
                                                                        params):
    """As Caffe, whose backward runs im2col again, the weight gradient is that of the data backward sees."""
    host_threads(1)
    written = gaussian((3, 4, 7, 6), seed=5).cpu_data()

    def overwrite(layer, bottom):
        bottom.mutable_cpu_data()[...] = written

    (_, weight_diff), calls = conv_gradients(make_layer, gaussian, params, between=overwrite)
    (_, want), kept_calls = conv_gradients(make_layer, gaussian, params, data=written)
    assert calls == kept_calls + 1
    np.testing.assert_array_equal(weight_diff, want)
