"""im2col/col2im helpers: columns equal explicit window copies, and col2im is im2col's adjoint."""

import itertools

import numpy as np
import pytest

from caffe_layers_vision.im2col_ops import col2im, im2col
from caffe_layers_vision.spatial_params import SpatialParams
from caffe_layers_vision.workspace import Workspace

GEOMETRIES = [
    SpatialParams((3, 3), (2, 2), (1, 1), (1, 1)),
    SpatialParams((3, 2), (1, 2), (0, 1), (2, 1)),
    SpatialParams((1, 1), (1, 1), (0, 0), (1, 1)),
    SpatialParams((2, 2, 2), (1, 2, 1), (1, 0, 0), (1, 1, 1)),
    # Kernels overhanging the padded input by less than the stride: one window on that axis, as in Caffe.
    SpatialParams((6, 3), (3, 2), (0, 1), (1, 1)),
    SpatialParams((2, 7), (1, 3), (0, 0), (1, 1)),
    SpatialParams((6, 2), (3, 1), (0, 0), (1, 1)),
]


@pytest.mark.parametrize("params", GEOMETRIES)
@pytest.mark.parametrize("num", [1, 3])
def test_columns_are_the_windows(params, num):
    axes = len(params.kernel)
    x = np.random.default_rng(0).standard_normal((num, 2, *(5 + a for a in range(axes)))).astype(np.float32)
    out = params.conv_output_shape(x.shape[2:])
    cols = im2col(np, x, params, out, Workspace(), "cols").reshape(2, *params.kernel, *out, num)
    widened = params.padded_shape(x.shape[2:], out)
    padded = np.pad(x, [(0, 0), (0, 0)] + [(p, w - s - p) for p, s, w in zip(params.pad, x.shape[2:], widened,
                                                                           strict=True)])
    for offset in itertools.product(*(range(k) for k in params.kernel)):
        window = tuple(slice(k * d, k * d + s * (o - 1) + 1, s)
                       for k, d, s, o in zip(offset, params.dilation, params.stride, out, strict=True))
        want = padded[(slice(None), slice(None), *window)]
        np.testing.assert_array_equal(np.moveaxis(cols[(slice(None), *offset)], -1, 0), want)


@pytest.mark.parametrize("params", GEOMETRIES)
def test_col2im_is_the_adjoint_of_im2col(params):
    rng = np.random.default_rng(1)
    axes = len(params.kernel)
    x = rng.standard_normal((2, 3, *(4 + a for a in range(axes)))).astype(np.float32)
    out = params.conv_output_shape(x.shape[2:])
    work = Workspace()
    cols = im2col(np, x, params, out, work, "cols").copy()
    other = rng.standard_normal(cols.shape).astype(np.float32)
    back = np.empty_like(x)
    col2im(np, other, back, params, out, work, "col2im")
    left = np.vdot(cols.astype(np.float64), other)
    assert left == pytest.approx(np.vdot(x.astype(np.float64), back), rel=1e-5)
