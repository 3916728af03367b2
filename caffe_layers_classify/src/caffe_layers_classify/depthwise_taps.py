"""DepthwiseTaps: depthwise convolution on strided views, a sum over kernel taps with one pass per tap.

Input x is (N, C, *spatial); the weights are Caffe's for group == channels, (C * m, 1, *kernel) with
m = num_output / C (the depth multiplier), so output channel c * m + j filters input channel c. A tap
(an offset in the kernel) sees the zero-padded input through one strided view of shape (N, C, *out): no
im2col of the whole input, and no loop over channels or pixels. Both depthwise layers of the pack run it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.layer_bases.kernel_geometry import KernelGeometry


class DepthwiseTaps:
    """The forward and backward passes of one layer's depthwise convolution, with its scratch arrays."""

    def __init__(self, geometry: KernelGeometry) -> None:
        self.geometry = geometry
        self._buffers: dict[str, Array] = {}
        self._zeroed_border: tuple[int, ...] | None = None

    def _array(self, xp: ArrayModule, name: str, shape: tuple[int, ...]) -> Array:
        """An uninitialised float32 scratch array, reallocated only when more room is needed."""
        count = math.prod(shape)
        flat = self._buffers.get(name)
        if flat is None or flat.size < count or not isinstance(flat, xp.ndarray):
            flat = xp.empty(max(count, 1), dtype=np.float32)
            self._buffers[name] = flat
            if name == "padded":
                self._zeroed_border = None
        return flat[:count].reshape(shape)

    def _inner(self, padded: Array, spatial: tuple[int, ...]) -> Array:
        """The region of a padded array that holds the input."""
        return padded[(slice(None), slice(None),
                       *(slice(p, p + i) for p, i in zip(self.geometry.pad, spatial, strict=True)))]

    def _tap_views(self, padded: Array, out: tuple[int, ...]) -> Iterator[tuple[int, Array]]:
        """(tap index, the (N, C, *out) view of `padded` that tap reads), taps in Caffe's row-major order."""
        g = self.geometry
        for index, offsets in enumerate(itertools.product(*(range(k) for k in g.kernel))):
            window = tuple(slice(t * d, t * d + s * (o - 1) + 1, s)
                           for t, d, s, o in zip(offsets, g.dilation, g.stride, out, strict=True))
            yield index, padded[(slice(None), slice(None), *window)]

    def _padded_input(self, xp: ArrayModule, x: Array, out: tuple[int, ...]) -> Array:
        """x inside a zero border; the border is zeroed only when the buffer or its shape changes."""
        shape = (*x.shape[:2], *self.geometry.padded_shape(x.shape[2:], out))
        padded = self._array(xp, "padded", shape)
        if self._zeroed_border != shape:
            padded.fill(0)
            self._zeroed_border = shape
        self._inner(padded, x.shape[2:])[...] = x
        return padded

    def _by_multiplier(self, array: Array, channels: int) -> Array:
        """An (N, C * m, *spatial) array as (N, C, m, *spatial)."""
        return array.reshape(array.shape[0], channels, -1, *array.shape[2:])

    def _tap_weights(self, weight: Array, channels: int, spatial_axes: int) -> Array:
        """The weights as (taps, 1, C, m, 1, ...), broadcastable against (N, C, m, *out)."""
        by_tap = weight.reshape(channels, -1, self.geometry.taps).transpose(2, 0, 1)
        return by_tap.reshape(by_tap.shape[0], 1, *by_tap.shape[1:], *(1,) * spatial_axes)

    def forward(self, xp: ArrayModule, x: Array, weight: Array, bias: Array | None, out: Array) -> None:
        """out (N, C * m, *out) = the taps' sum of weight * shifted x, then + bias (Caffe's order)."""
        channels, spatial_axes = x.shape[1], x.ndim - 2
        result = self._by_multiplier(out, channels)
        product = self._array(xp, "product", result.shape)
        weights = self._tap_weights(weight, channels, spatial_axes)
        for index, view in self._tap_views(self._padded_input(xp, x, out.shape[2:]), out.shape[2:]):
            xp.multiply(view[:, :, None], weights[index], out=result if index == 0 else product)
            if index:
                result += product
        if bias is not None:
            result += bias.reshape(1, channels, -1, *(1,) * spatial_axes)

    def backward_data(self, xp: ArrayModule, top_diff: Array, weight: Array, bottom_diff: Array) -> None:
        """bottom_diff (N, C, *in) = each tap's weight * top diff, added back where the tap read."""
        channels, spatial_axes = bottom_diff.shape[1], bottom_diff.ndim - 2
        out = top_diff.shape[2:]
        diff = self._by_multiplier(top_diff, channels)
        shape = (*bottom_diff.shape[:2], *self.geometry.padded_shape(bottom_diff.shape[2:], out))
        padded = self._array(xp, "padded_diff", shape)
        padded.fill(0)
        product = self._array(xp, "product", diff.shape)
        weights = self._tap_weights(weight, channels, spatial_axes)
        for index, view in self._tap_views(padded, out):
            xp.multiply(diff, weights[index], out=product)
            view += product[:, :, 0] if diff.shape[2] == 1 else product.sum(axis=2)
        bottom_diff[...] = self._inner(padded, bottom_diff.shape[2:])

    def backward_weight(self, xp: ArrayModule, x: Array, top_diff: Array, weight_diff: Array) -> None:
        """Accumulates into weight_diff (C * m, 1, *kernel) each tap's sum of shifted x * top diff."""
        channels = x.shape[1]
        out = top_diff.shape[2:]
        diff = self._by_multiplier(top_diff, channels)
        product = self._array(xp, "product", diff.shape)
        by_tap = weight_diff.reshape(channels, -1, self.geometry.taps)
        summed_axes = (0, *range(3, diff.ndim))
        for index, view in self._tap_views(self._padded_input(xp, x, out), out):
            xp.multiply(view[:, :, None], diff, out=product)
            by_tap[:, :, index] += product.sum(axis=summed_axes)

    @staticmethod
    def backward_bias(top_diff: Array, bias_diff: Array) -> None:
        """Accumulates into bias_diff (C * m) the top diff summed over the batch and space."""
        bias_diff += top_diff.reshape(top_diff.shape[0], top_diff.shape[1], -1).sum(axis=(0, 2))
