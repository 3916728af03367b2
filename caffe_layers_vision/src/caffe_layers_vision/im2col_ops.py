"""im2col and col2im on channel-major buffers, with numpy/cupy stride tricks (no loop over pixels).

Layout: a padded input is held as (C, num, *padded_spatial); its column view is
(C, *kernel, num, *out_spatial), so one matrix product of the weights (M, C*prod(kernel)) with the
columns reshaped to (C*prod(kernel), num*prod(out)) convolves the whole batch at once.
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


def padded_channel_major(xp: Any, x: Any, pad: tuple[int, ...], work: Workspace, name: str) -> Any:
    """Copies x (num, C, *spatial) into a zero-bordered (C, num, *spatial + 2 pad) workspace buffer."""
    num, channels, *spatial = x.shape
    shape = (channels, num, *(s + 2 * p for s, p in zip(spatial, pad, strict=True)))
    padded = work.bordered(xp, name, shape)
    inner = (slice(None), slice(None), *(slice(p, p + s) for s, p in zip(spatial, pad, strict=True)))
    padded[inner] = x.swapaxes(0, 1)
    return padded


def column_view(xp: Any, padded: Any, params: SpatialParams, out_spatial: tuple[int, ...]) -> Any:
    """The (C, *kernel, num, *out) view of a (C, num, *padded) array: [c, k, n, o] = padded[c, n, o*s+k*d]."""
    channels, num = padded.shape[:2]
    step = padded.strides
    shape = (channels, *params.kernel, num, *out_spatial)
    strides = (step[0], *(d * s for d, s in zip(params.dilation, step[2:], strict=True)),
               step[1], *(st * s for st, s in zip(params.stride, step[2:], strict=True)))
    return as_strided(xp, padded, shape, strides)


def im2col(xp: Any, x: Any, params: SpatialParams, out_spatial: tuple[int, ...], work: Workspace,
           name: str) -> Any:
    """Columns (C * prod(kernel), num * prod(out)) of x (num, C, *spatial), in the named workspace buffer."""
    num, channels = x.shape[:2]
    cols = work.array(xp, name, (channels, *params.kernel, num, *out_spatial))
    if params.is_1x1:
        cols.reshape(channels, num, *out_spatial)[...] = x.swapaxes(0, 1)
    else:
        padded = padded_channel_major(xp, x, params.pad, work, f"{name}:padded")
        cols[...] = column_view(xp, padded, params, out_spatial)
    return cols.reshape(channels * math.prod(params.kernel), num * math.prod(out_spatial))


def col2im_add(cols: Any, padded: Any, params: SpatialParams, out_spatial: tuple[int, ...]) -> None:
    """Adds every column entry (C, *kernel, num, *out) onto the (C, num, *padded) element it was read from."""
    for offsets in itertools.product(*(range(k) for k in params.kernel)):
        steps = zip(offsets, params.dilation, params.stride, out_spatial, strict=True)
        target = tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in steps)
        padded[(slice(None), slice(None), *target)] += cols[(slice(None), *offsets)]


def col2im(xp: Any, cols: Any, out: Any, params: SpatialParams, out_spatial: tuple[int, ...],
           work: Workspace, name: str) -> None:
    """Writes into out (num, C, *spatial) each pixel's sum over columns (C*prod(kernel), num*prod(out))."""
    num, channels, *spatial = out.shape
    cols = cols.reshape(channels, *params.kernel, num, *out_spatial)
    if params.is_1x1:
        out[...] = cols.reshape(channels, num, *spatial).swapaxes(0, 1)
        return
    shape = (channels, num, *(s + 2 * p for s, p in zip(spatial, params.pad, strict=True)))
    padded = work.zeros(xp, name, shape)
    col2im_add(cols, padded, params, out_spatial)
    inner = (slice(None), slice(None), *(slice(p, p + s) for s, p in zip(spatial, params.pad, strict=True)))
    out[...] = padded[inner].swapaxes(0, 1)
