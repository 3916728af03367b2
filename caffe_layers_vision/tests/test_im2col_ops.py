"""im2col/col2im helpers, in both column layouts: columns equal explicit window copies, col2im is im2col's
adjoint, and the batch-outermost layout reads unpadded images in place."""

import itertools

import numpy as np
import pytest

from caffe_core.layer_bases.kernel_geometry import KernelGeometry
from caffe_layers_vision.im2col_ops import col2im, im2col, needs_padded_copy, padded_shape

GEOMETRIES = [
    KernelGeometry((3, 3), (2, 2), (1, 1), (1, 1)),
    KernelGeometry((3, 2), (1, 2), (0, 1), (2, 1)),
    KernelGeometry((1, 1), (1, 1), (0, 0), (1, 1)),
    KernelGeometry((2, 2, 2), (1, 2, 1), (1, 0, 0), (1, 1, 1)),
    KernelGeometry((3, 3), (1, 1), (0, 0), (1, 1)),
    # Kernels overhanging the padded input by less than the stride: one window on that axis, as in Caffe.
    KernelGeometry((6, 3), (3, 2), (0, 1), (1, 1)),
    KernelGeometry((2, 7), (1, 3), (0, 0), (1, 1)),
    KernelGeometry((6, 2), (3, 1), (0, 0), (1, 1)),
]
LAYOUTS = pytest.mark.parametrize("batch_inner", [True, False], ids=["batch_inner", "batch_outer"])


def buffers(shape, params, out, batch_inner):
    """The columns and (when needed) padded buffer im2col/col2im write, filled with garbage."""
    num, channels, *spatial = shape
    cols = np.full((channels * int(np.prod(params.kernel)), num * int(np.prod(out))), np.nan, np.float32)
    padded = None
    if needs_padded_copy(params, tuple(spatial), out, batch_inner):
        padded = np.full(padded_shape(shape, params, out, batch_inner), np.nan, np.float32)
    return cols, padded


@LAYOUTS
@pytest.mark.parametrize("params", GEOMETRIES)
@pytest.mark.parametrize("num", [1, 3])
def test_columns_are_the_windows(params, num, batch_inner):
    axes = len(params.kernel)
    x = np.random.default_rng(0).standard_normal((num, 2, *(5 + a for a in range(axes)))).astype(np.float32)
    out = params.conv_output_shape(x.shape[2:])
    cols, padded = buffers(x.shape, params, out, batch_inner)
    im2col(np, x, params, out, cols, padded, batch_inner)
    if batch_inner:
        by_image = np.moveaxis(cols.reshape(2, *params.kernel, *out, num), -1, 1 + axes)
    else:
        by_image = cols.reshape(2, *params.kernel, num, *out)
    widened = params.padded_shape(x.shape[2:], out)
    far = [(p, w - s - p) for p, s, w in zip(params.pad, x.shape[2:], widened, strict=True)]
    padded_x = np.pad(x, [(0, 0), (0, 0), *far])
    for offset in itertools.product(*(range(k) for k in params.kernel)):
        window = tuple(slice(k * d, k * d + s * (o - 1) + 1, s)
                       for k, d, s, o in zip(offset, params.dilation, params.stride, out, strict=True))
        want = padded_x[(slice(None), slice(None), *window)]
        np.testing.assert_array_equal(np.moveaxis(by_image[(slice(None), *offset)], 1, 0), want)


@LAYOUTS
@pytest.mark.parametrize("params", GEOMETRIES)
def test_col2im_is_the_adjoint_of_im2col(params, batch_inner):
    rng = np.random.default_rng(1)
    axes = len(params.kernel)
    x = rng.standard_normal((2, 3, *(4 + a for a in range(axes)))).astype(np.float32)
    out = params.conv_output_shape(x.shape[2:])
    cols, padded = buffers(x.shape, params, out, batch_inner)
    im2col(np, x, params, out, cols, padded, batch_inner)
    other = rng.standard_normal(cols.shape).astype(np.float32)
    back = np.full_like(x, np.nan)
    col2im(np, other, back, params, out, padded, batch_inner)
    left = np.vdot(cols.astype(np.float64), other)
    assert left == pytest.approx(np.vdot(x.astype(np.float64), back), rel=1e-5)


def test_batch_outermost_columns_of_unpadded_images_need_no_copy():
    params = KernelGeometry((3, 3), (1, 1), (0, 0), (1, 1))
    assert not needs_padded_copy(params, (6, 5), (4, 3), batch_inner=False)
    assert needs_padded_copy(params, (6, 5), (4, 3), batch_inner=True)
    padded = KernelGeometry((3, 3), (1, 1), (1, 1), (1, 1))
    assert needs_padded_copy(padded, (6, 5), (6, 5), batch_inner=False)
