"""im2col and col2im with numpy/cupy stride tricks (no loop over pixels), for a chunk of images at a time.

Two layouts of the columns: batch innermost, (C, *kernel, *out_spatial, num) read from a padded copy
(C, *padded_spatial, num), where every window copy and col2im add runs over contiguous rows of
out_width * num values; or batch outermost, (C, *kernel, num, *out_spatial), read from the images
themselves (or a padded copy (C, num, *padded_spatial)), whose matrix product with the weights holds
each image's output as a contiguous block. Either way one matrix product of the weights
(M, C*prod(kernel)) with the columns reshaped to (C*prod(kernel), prod(out)*num) convolves many images.
"""

from __future__ import annotations

import itertools

from caffe_core.array_types import Array, ArrayModule
from caffe_core.host_threads import assign, split_over
from caffe_core.layer_bases.kernel_geometry import KernelGeometry
from caffe_layers_vision.workspace import Workspace


def as_strided(xp: ArrayModule, array: Array, shape: tuple[int, ...], strides: tuple[int, ...]) -> Array:
    """A read-only strided view on either side (numpy or cupy)."""
    return xp.lib.stride_tricks.as_strided(array, shape, strides)


def batch_last(array: Array) -> Array:
    """A (num, C, ...) array seen as (C, ..., num)."""
    return array.transpose(*range(1, array.ndim), 0)


def batch_first(array: Array) -> Array:
    """A (C, ..., num) array seen as (num, C, ...)."""
    return array.transpose(array.ndim - 1, *range(array.ndim - 1))


def _inner(spatial: tuple[int, ...], pad: tuple[int, ...]) -> tuple[slice, ...]:
    return (slice(None), *(slice(p, p + s) for s, p in zip(spatial, pad, strict=True)), slice(None))


def padded_batch_last(xp: ArrayModule, x: Array, params: KernelGeometry, out_spatial: tuple[int, ...],
                      work: Workspace, name: str) -> Array:
    """Copies x (num, C, *spatial) into a zero-bordered (C, *padded, num) workspace buffer."""
    num, channels, *spatial = x.shape
    inner = _inner(tuple(spatial), params.pad)
    padded = work.bordered(xp, name, (channels, *params.padded_shape(tuple(spatial), out_spatial), num),
                           inner=inner)
    padded[inner] = batch_last(x)
    return padded


def column_view(xp: ArrayModule, padded: Array, params: KernelGeometry,
                out_spatial: tuple[int, ...]) -> Array:
    """The (C, *kernel, *out, num) view of a (C, *padded, num) array: [c, k, o, n] = padded[c, o*s+k*d, n]."""
    step = padded.strides
    spatial_steps = step[1:-1]
    shape = (padded.shape[0], *params.kernel, *out_spatial, padded.shape[-1])
    strides = (step[0], *(d * s for d, s in zip(params.dilation, spatial_steps, strict=True)),
               *(st * s for st, s in zip(params.stride, spatial_steps, strict=True)), step[-1])
    return as_strided(xp, padded, shape, strides)


def needs_padded_copy(params: KernelGeometry, spatial: tuple[int, ...], out_spatial: tuple[int, ...],
                      batch_inner: bool) -> bool:
    """Whether im2col/col2im go through a padded buffer rather than a view of the images themselves."""
    return batch_inner or any(params.pad) or params.padded_shape(spatial, out_spatial) != spatial


def padded_shape(x_shape: tuple[int, ...], params: KernelGeometry, out_spatial: tuple[int, ...],
                 batch_inner: bool) -> tuple[int, ...]:
    """The padded buffer's shape for images (num, C, *spatial): (C, *padded, num) or (C, num, *padded)."""
    num, channels, *spatial = x_shape
    padded = params.padded_shape(tuple(spatial), out_spatial)
    return (channels, *padded, num) if batch_inner else (channels, num, *padded)


def _interior(spatial: tuple[int, ...], pad: tuple[int, ...], batch_inner: bool) -> tuple[slice, ...]:
    inner = tuple(slice(p, p + s) for s, p in zip(spatial, pad, strict=True))
    return (slice(None), *inner, slice(None)) if batch_inner else (slice(None), slice(None), *inner)


def _channel_major(x: Array, batch_inner: bool) -> Array:
    """Images (num, C, *spatial) seen as (C, *spatial, num) or (C, num, *spatial)."""
    return batch_last(x) if batch_inner else x.swapaxes(0, 1)


def _zero_border(padded: Array, interior: tuple[slice, ...]) -> None:
    for axis, window in enumerate(interior):
        if window.start is None:
            continue
        lead = (slice(None),) * axis
        padded[(*lead, slice(0, window.start))] = 0
        padded[(*lead, slice(window.stop, None))] = 0


def padded_images(xp: ArrayModule, x: Array, params: KernelGeometry, padded: Array,
                  batch_inner: bool) -> Array:
    """Copies images (num, C, *spatial) into `padded` (see padded_shape) inside a zero border."""
    interior = _interior(tuple(x.shape[2:]), params.pad, batch_inner)
    _zero_border(padded, interior)
    assign(xp, padded[interior], _channel_major(x, batch_inner))
    return padded


def window_view(xp: ArrayModule, padded: Array, params: KernelGeometry, out_spatial: tuple[int, ...],
                batch_inner: bool) -> Array:
    """The windows (C, *kernel, *out, num) of a (C, *padded, num) array, or (C, *kernel, num, *out) of a
    (C, num, *padded) one: [c, k, o, n] = padded[c, o * stride + k * dilation, n]."""
    if batch_inner:
        return column_view(xp, padded, params, out_spatial)
    step = padded.strides
    spatial_steps = step[2:]
    shape = (padded.shape[0], *params.kernel, padded.shape[1], *out_spatial)
    strides = (step[0], *(d * s for d, s in zip(params.dilation, spatial_steps, strict=True)), step[1],
               *(st * s for st, s in zip(params.stride, spatial_steps, strict=True)))
    return as_strided(xp, padded, shape, strides)


def im2col(xp: ArrayModule, x: Array, params: KernelGeometry, out_spatial: tuple[int, ...], cols: Array,
           padded: Array | None, batch_inner: bool) -> Array:
    """Writes the columns of images x (num, C, *spatial) into cols, (C*prod(kernel), prod(out)*num) with
    the batch innermost or (C*prod(kernel), num*prod(out)) with it outermost; `padded` is a buffer of
    padded_shape when needs_padded_copy, else None."""
    if padded is None:
        source = _channel_major(x, batch_inner)
    else:
        source = padded_images(xp, x, params, padded, batch_inner)
    view = window_view(xp, source, params, out_spatial, batch_inner)
    assign(xp, cols.reshape(view.shape), view)
    return cols


def _window(offsets: tuple[int, ...], params: KernelGeometry,
            out_spatial: tuple[int, ...]) -> tuple[slice, ...]:
    """Per spatial axis, the padded positions the outputs read at one kernel offset."""
    steps = zip(offsets, params.dilation, params.stride, out_spatial, strict=True)
    return tuple(slice(k * d, k * d + s * (o - 1) + 1, s) for k, d, s, o in steps)


def col2im_add(cols: Array, padded: Array, params: KernelGeometry, out_spatial: tuple[int, ...]) -> None:
    """Adds every column entry (C, *kernel, *out, num) onto the (C, *padded, num) element it was read from."""
    for offsets in itertools.product(*(range(k) for k in params.kernel)):
        window = _window(offsets, params, out_spatial)
        padded[(slice(None), *window, slice(None))] += cols[(slice(None),) + offsets]


def col2im(xp: ArrayModule, cols: Array, out: Array, params: KernelGeometry, out_spatial: tuple[int, ...],
           padded: Array | None, batch_inner: bool) -> None:
    """Writes into images out (num, C, *spatial) each pixel's sum over the columns (laid out as im2col's)
    it was read into; `padded` is a buffer of padded_shape when needs_padded_copy, else None."""
    num, channels, *spatial = out.shape
    lead = (*out_spatial, num) if batch_inner else (num, *out_spatial)
    cols = cols.reshape(channels, *params.kernel, *lead)
    images = _channel_major(out, batch_inner)
    target = images if padded is None else padded
    lead_axes, trail_axes = ((slice(None),), (slice(None),)) if batch_inner else ((slice(None),) * 2, ())
    windows = [(offsets, (*lead_axes, *_window(offsets, params, out_spatial), *trail_axes))
               for offsets in itertools.product(*(range(k) for k in params.kernel))]
    interior = _interior(tuple(spatial), params.pad, batch_inner)

    def channels_block(part: slice) -> None:
        block = target[part]
        block.fill(0)
        for offsets, where in windows:
            view = block[where]
            xp.add(view, cols[(part,) + offsets], out=view)
        if padded is not None:
            images[part] = block[interior]

    split_over(xp, channels, cols.size, channels_block)
