"""DepthwiseTaps: forward, bottom, weight and bias gradients against loop references."""

import itertools

import numpy as np
import pytest

from caffe_core.layer_bases.kernel_geometry import KernelGeometry
from caffe_layers_classify.depthwise_taps import DepthwiseTaps

Geometry = KernelGeometry

# (geometry, input shape (N, C, *spatial), depth multiplier)
CASES = [
    (Geometry((3, 3), (1, 1), (1, 1), (1, 1)), (2, 3, 5, 4), 1),
    (Geometry((3, 3), (2, 2), (1, 1), (1, 1)), (2, 3, 7, 6), 1),
    (Geometry((2, 3), (2, 1), (0, 2), (1, 1)), (1, 2, 5, 5), 1),
    (Geometry((3, 3), (1, 2), (2, 2), (2, 2)), (2, 2, 6, 7), 1),
    (Geometry((3, 3), (3, 3), (0, 0), (1, 1)), (1, 2, 7, 8), 1),
    (Geometry((3, 3), (1, 1), (1, 1), (1, 1)), (2, 3, 4, 4), 2),
    (Geometry((3,), (2,), (1,), (1,)), (2, 4, 9), 3),
    (Geometry((2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2)), (1, 2, 3, 4, 4), 1),
]


def output_shape(g: Geometry, spatial: tuple[int, ...]) -> tuple[int, ...]:
    """(in + 2 pad - extent) / stride + 1 per axis."""
    return tuple((i + 2 * p - e) // s + 1
                 for i, p, e, s in zip(spatial, g.pad, g.extent, g.stride, strict=True))


def reads(g: Geometry, spatial: tuple[int, ...], out: tuple[int, ...]):
    """Every (output position, tap index, input position) with the input position inside the input."""
    for position in itertools.product(*(range(o) for o in out)):
        for tap, offsets in enumerate(itertools.product(*(range(k) for k in g.kernel))):
            source = tuple(o * s - p + t * d for o, s, p, t, d
                           in zip(position, g.stride, g.pad, offsets, g.dilation, strict=True))
            if all(0 <= i < n for i, n in zip(source, spatial, strict=True)):
                yield position, tap, source


def by_output(array: np.ndarray, multiplier: int) -> np.ndarray:
    """An input-shaped array (N, C, ...) repeated to the output channels (N, C * m, ...)."""
    return np.repeat(array, multiplier, axis=1)


def reference_forward(x, weight, bias, g, multiplier):
    """out[n, c * m + j, o] = sum over taps of w[c * m + j, tap] x[n, c, o * s - p + tap * d] (+ bias)."""
    spatial = x.shape[2:]
    out_shape = output_shape(g, spatial)
    wide = by_output(x.astype(np.float64), multiplier)
    w = weight.reshape(weight.shape[0], -1)
    out = np.zeros((x.shape[0], w.shape[0], *out_shape))
    for position, tap, source in reads(g, spatial, out_shape):
        out[(slice(None), slice(None), *position)] += w[:, tap] * wide[(slice(None), slice(None), *source)]
    if bias is not None:
        out += bias.reshape(1, -1, *(1,) * len(spatial))
    return out


def reference_backward(x, weight, top_diff, g, multiplier):
    """(bottom diff, weight diff) by the same loop."""
    spatial = x.shape[2:]
    w = weight.reshape(weight.shape[0], -1)
    wide_dx = np.zeros((x.shape[0], w.shape[0], *spatial))
    dw = np.zeros_like(w, dtype=np.float64)
    wide = by_output(x.astype(np.float64), multiplier)
    for position, tap, source in reads(g, spatial, top_diff.shape[2:]):
        dy = top_diff[(slice(None), slice(None), *position)]
        wide_dx[(slice(None), slice(None), *source)] += w[:, tap] * dy
        dw[:, tap] += (wide[(slice(None), slice(None), *source)] * dy).sum(axis=0)
    dx = wide_dx.reshape(x.shape[0], x.shape[1], multiplier, *spatial).sum(axis=2)
    return dx, dw.reshape(weight.shape)


def inputs(shape, g, multiplier, seed=1):
    """Random x, weights, bias and top diff for a geometry."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    weight = rng.standard_normal((shape[1] * multiplier, 1, *g.kernel)).astype(np.float32)
    bias = rng.standard_normal(shape[1] * multiplier).astype(np.float32)
    top_diff = rng.standard_normal((shape[0], shape[1] * multiplier, *output_shape(g, shape[2:])))
    return x, weight, bias, top_diff.astype(np.float32)


@pytest.mark.parametrize(("g", "shape", "multiplier"), CASES)
def test_forward(g, shape, multiplier):
    x, weight, bias, top_diff = inputs(shape, g, multiplier)
    op = DepthwiseTaps(g)
    out = np.empty(top_diff.shape, np.float32)
    op.forward(np, x, weight, bias, out)
    np.testing.assert_allclose(out, reference_forward(x, weight, bias, g, multiplier), rtol=1e-5, atol=1e-5)
    op.forward(np, x, weight, None, out)
    np.testing.assert_allclose(out, reference_forward(x, weight, None, g, multiplier), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("g", "shape", "multiplier"), CASES)
def test_backward(g, shape, multiplier):
    x, weight, bias, top_diff = inputs(shape, g, multiplier)
    op = DepthwiseTaps(g)
    dx = np.full(x.shape, 9, np.float32)
    op.backward_data(np, top_diff, weight, dx)
    dw = np.ones(weight.shape, np.float32)
    op.backward_weight(np, x, top_diff, dw)
    db = np.ones(bias.shape, np.float32)
    op.backward_bias(top_diff, db)
    want_dx, want_dw = reference_backward(x, weight, top_diff, g, multiplier)
    np.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw, want_dw + 1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db, top_diff.sum(axis=(0, *range(2, top_diff.ndim))) + 1, rtol=1e-5)


def test_windows_past_the_padded_input_read_zeros():
    """Caffe's int division: (2 + 0 - 3) / 2 + 1 = 1 output whose window overhangs the input."""
    g = Geometry((3,), (2,), (0,), (1,))
    x = np.array([[[1.0, 2.0]]], np.float32)
    out = np.empty((1, 1, 1), np.float32)
    DepthwiseTaps(g).forward(np, x, np.array([1.0, 10.0, 100.0], np.float32), None, out)
    assert out.reshape(-1).tolist() == [21.0]


def test_reuses_its_buffers_across_shapes():
    g = Geometry((3, 3), (1, 1), (1, 1), (1, 1))
    op = DepthwiseTaps(g)
    for shape in [(2, 3, 6, 6), (1, 3, 4, 5), (2, 3, 6, 6)]:
        x, weight, bias, _ = inputs(shape, g, 1, seed=shape[3])
        out = np.empty((shape[0], 3, *shape[2:]), np.float32)
        op.forward(np, x, weight, bias, out)
        np.testing.assert_allclose(out, reference_forward(x, weight, bias, g, 1), rtol=1e-5, atol=1e-5)


def test_geometry():
    g = Geometry((3, 2), (2, 1), (1, 0), (2, 1))
    assert g.extent == (5, 2)
    assert g.taps == 6
    assert g.padded_shape((6, 4), (2, 3)) == (8, 4)
    assert g.padded_shape((2, 4), (1, 3)) == (5, 4)
