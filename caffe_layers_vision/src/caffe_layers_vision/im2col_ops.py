"""im2col and col2im with numpy/cupy stride tricks (no loop over pixels), on batch-innermost buffers.

Layout: a padded input is held as (C, *padded_spatial, num) and its column view is
(C, *kernel, *out_spatial, num). One matrix product of the weights (M, C*prod(kernel)) with the columns
reshaped to (C*prod(kernel), prod(out)*num) convolves the whole batch at once, and keeping the batch
innermost makes every window copy and col2im add run over contiguous rows of out_width * num values.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from caffe_layers_vision.spatial_params import SpatialParams
from caffe_layers_vision.workspace import Workspace


def as_strided(xp: Any, array: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A read-only strided view on either side (numpy or cupy)."""
    return xp.lib.stride_tricks.as_strided(array, shape, strides)


def batch_last(array: Any) -> Any:
    """A (num, C, ...) array seen as (C, ..., num)."""
    return array.transpose(*range(1, array.ndim), 0)


def batch_first(array: Any) -> Any:
    """A (C, ..., num) array seen as (num, C, ...)."""
    return array.transpose(array.ndim - 1, *range(array.ndim - 1))


def _inner(spatial: tuple[int, ...], pad: tuple[int, ...]) -> tuple[slice, ...]:
    return (slice(None), *(slice(p, p + s) for s, p in zip(spatial, pad, strict=True)), slice(None))


def padded_batch_last(xp: Any, x: Any, pad: tuple[int, ...], work: Workspace, name: str) -> Any:
    """Copies x (num, C, *spatial) into a zero-bordered (C, *spatial + 2 pad, num) workspace buffer."""
    num, channels, *spatial = x.shape
    shape = (channels, *(s + 2 * p for s, p in zip(spatial, pad, strict=True)), num)
    padded = work.bordered(xp, name, shape)
    padded[_inner(tuple(spatial), pad)] = batch_last(x)
    return padded


def column_view(xp: Any, padded: Any, params: SpatialParams, out_spatial: tuple[int, ...]) -> Any:
    """The (C, *kernel, *out, num) view of a (C, *padded, num) array: [c, k, o, n] = padded[c, o*s+k*d, n]."""
    step = padded.strides
    spatial_steps = step[1:-1]
    shape = (padded.shape[0], *params.kernel, *out_spatial, padded.shape[-1])
    strides = (step[0], *(d * s for d, s in zip(params.dilation, spatial_steps, strict=True)),
               *(st * s for st, s in zip(params.stride, spatial_steps, strict=True)), step[-1])
    return as_strided(xp, padded, shape, strides)


def im2col(xp: Any, x: Any, params: SpatialParams, out_spatial: tuple[int, ...], work: Workspace,
           name: str) -> Any:
    """Columns (C*prod(kernel), prod(out)*num) of x (num, C, *spatial) in `work`; x itself if 1x1, num 1."""
    num, channels = x.shape[:2]
    if params.is_1x1 and num == 1:
        return x.reshape(channels, -1)
    cols = work.array(xp, name, (channels, *params.kernel, *out_spatial, num))
    if params.is_1x1:
        cols.reshape(channels, *out_spatial, num)[...] = batch_last(x)
    else:
        # The pad is part of the name: a buffer shared by layers is reused only with the same border.
        padded = padded_batch_last(xp, x, params.pad, work, f"{name}:padded{params.pad}")
        cols[...] = column_view(xp, padded, params, out_spatial)
    return cols.reshape(channels * math.prod(params.kernel), math.prod(out_spatial) * num)


def col2im_add(cols: Any, padded: Any, params: SpatialParams, out_spatial: tuple[int, ...]) -> None:
    """Adds every column entry (C, *kernel, *out, num) onto the (C, *padded, num) element it was read from."""
    for offsets in itertools.product(*(range(k) for k in params.kernel)):
        steps = zip(offsets, params.dilation, params.stride, out_spatial, strict=True)
        target = tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in steps)
        padded[(slice(None), *target, slice(None))] += cols[(slice(None), *offsets)]


def col2im(xp: Any, cols: Any, out: Any, params: SpatialParams, out_spatial: tuple[int, ...],
           work: Workspace, name: str) -> None:
    """Writes into out (num, C, *spatial) each pixel's sum over columns (C*prod(kernel), prod(out)*num)."""
    num, channels, *spatial = out.shape
    cols = cols.reshape(channels, *params.kernel, *out_spatial, num)
    if params.is_1x1:
        out[...] = batch_first(cols.reshape(channels, *spatial, num))
        return
    shape = (channels, *(s + 2 * p for s, p in zip(spatial, params.pad, strict=True)), num)
    padded = work.zeros(xp, name, shape)
    col2im_add(cols, padded, params, out_spatial)
    out[...] = batch_first(padded[_inner(tuple(spatial), params.pad)])
