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


def padded_batch_last(xp: Any, x: Any, params: SpatialParams, out_spatial: tuple[int, ...], work: Workspace,
                      name: str) -> Any:
    """Copies x (num, C, *spatial) into a zero-bordered (C, *padded, num) workspace buffer."""
    num, channels, *spatial = x.shape
    inner = _inner(tuple(spatial), params.pad)
    padded = work.bordered(xp, name, (channels, *params.padded_shape(tuple(spatial), out_spatial), num),
                           inner=inner)
    padded[inner] = batch_last(x)
    return padded


def column_view(xp: Any, padded: Any, params: SpatialParams, out_spatial: tuple[int, ...]) -> Any:
    """The (C, *kernel, *out, num) view of a (C, *padded, num) array: [c, k, o, n] = padded[c, o*s+k*d, n]."""
    step = padded.strides
    spatial_steps = step[1:-1]
    shape = (padded.shape[0], *params.kernel, *out_spatial, padded.shape[-1])
    strides = (step[0], *(d * s for d, s in zip(params.dilation, spatial_steps, strict=True)),
               *(st * s for st, s in zip(params.stride, spatial_steps, strict=True)), step[-1])
    return as_strided(xp, padded, shape, strides)


def phase_split_batch_last(xp: Any, x: Any, params: SpatialParams, out_spatial: tuple[int, ...],
                           work: Workspace, name: str) -> Any:
    """x (num, C, *spatial) zero-padded as (C, *padded[:-1], stride, padded[-1] / stride rounded up, num)."""
    # The last axis is split by stride phase, [..., r, q, n] = padded[..., q * stride + r, n], so one kernel
    # column's windows over consecutive outputs are contiguous runs rather than every stride-th pixel.
    num, channels, *spatial = x.shape
    stride, pad, width = params.stride[-1], params.pad[-1], spatial[-1]
    *lead_padded, padded_width = params.padded_shape(tuple(spatial), out_spatial)
    shape = (channels, *lead_padded, stride, -(-padded_width // stride), num)
    phases = work.bordered(xp, name, shape)
    lead = tuple(slice(p, p + s) for s, p in zip(spatial[:-1], params.pad[:-1], strict=True))
    source = batch_last(x)
    for phase in range(stride):
        first = (phase - pad) % stride
        start, count = (first + pad) // stride, len(range(first, width, stride))
        phases[(slice(None), *lead, phase, slice(start, start + count))] = source[..., first::stride, :]
    return phases


def phase_column_view(xp: Any, phases: Any, params: SpatialParams, out_spatial: tuple[int, ...],
                      column: int) -> Any:
    """The (C, *kernel[:-1], *out, num) windows of one last-axis kernel offset in a phase-split array."""
    offset = column * params.dilation[-1]
    stride = params.stride[-1]
    lead_axes = len(out_spatial) - 1
    start = offset // stride
    base = phases[(slice(None),) * (1 + lead_axes) + (offset % stride, slice(start, start + out_spatial[-1]))]
    step = base.strides
    lead_steps = step[1:1 + lead_axes]
    shape = (base.shape[0], *params.kernel[:-1], *out_spatial, base.shape[-1])
    strides = (step[0], *(d * s for d, s in zip(params.dilation[:-1], lead_steps, strict=True)),
               *(st * s for st, s in zip(params.stride[:-1], lead_steps, strict=True)), step[-2], step[-1])
    return as_strided(xp, base, shape, strides)


def im2col(xp: Any, x: Any, params: SpatialParams, out_spatial: tuple[int, ...], work: Workspace,
           name: str) -> Any:
    """Columns (C*prod(kernel), prod(out)*num) of x (num, C, *spatial) in `work`; x itself if 1x1, num 1."""
    num, channels = x.shape[:2]
    if params.is_1x1 and num == 1:
        return x.reshape(channels, -1)
    cols = work.array(xp, name, (channels, *params.kernel, *out_spatial, num))
    if params.is_1x1:
        cols.reshape(channels, *out_spatial, num)[...] = batch_last(x)
    elif params.stride[-1] > 1:
        # The name fixes the region the buffer's border surrounds: pad, stride and the exact input size.
        border_key = f"{params.pad}{params.stride}{tuple(x.shape[2:])}"
        phases = phase_split_batch_last(xp, x, params, out_spatial, work, f"{name}:phases{border_key}")
        for column in range(params.kernel[-1]):
            cols[(slice(None),) * len(params.kernel) + (column,)] = phase_column_view(
                xp, phases, params, out_spatial, column)
    else:
        # The pad is in the name: layers of other pads sharing the scratch keep their own bordered buffer.
        padded = padded_batch_last(xp, x, params, out_spatial, work, f"{name}:padded{params.pad}")
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
    padded = work.zeros(xp, name, (channels, *params.padded_shape(tuple(spatial), out_spatial), num))
    col2im_add(cols, padded, params, out_spatial)
    out[...] = batch_first(padded[_inner(tuple(spatial), params.pad)])
