"""Axpy (SENet, hujie-frank/SENet): top = a * x + y with one scale a per (num, channel)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class AxpyLayer(Layer):
    """Channel-wise scale and element-wise sum in one layer: bottoms a (N, C[, 1, 1]), x and y (N, C, ...)."""

    type = "Axpy"
    exact_num_bottom_blobs = 3
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks a against x's (N, C) and x against y; the top takes x's shape."""
        scale, x, y = bottom
        if x.num_axes < 2:
            raise self.error(f"bottom 1 (x) needs a channel axis, got shape {list(x.shape)}")
        if scale.num_axes < 2 or scale.shape[:2] != x.shape[:2] or scale.count != x.count_between(0, 2):
            raise self.error(f"bottom 0 (the scale a) must be (N, C) or (N, C, 1, 1) with the N and C of "
                             f"bottom 1 (x): got {list(scale.shape)} for x of shape {list(x.shape)}")
        if x.shape != y.shape:
            raise self.error(f"bottoms 1 (x) and 2 (y) must have one shape, got {list(x.shape)} and "
                             f"{list(y.shape)}")
        top[0].reshape_like(x)

    def _by_channel(self, array: Array, blob: Blob) -> Array:
        """An (N, C, spatial) view."""
        return array.reshape(blob.shape[0], blob.shape[1], -1)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = a * x + y."""
        scale, x, y = bottom
        a = scale.data_on(side).reshape(x.shape[0], x.shape[1], 1)
        result = a * self._by_channel(x.data_on(side), x) + self._by_channel(y.data_on(side), y)
        self._by_channel(top[0].mutable_data_on(side), top[0])[...] = result

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """da = sum over space of dtop * x; dx = a * dtop; dy = dtop (y last: in place, it is dtop)."""
        scale, x, y = bottom
        top_diff = self._by_channel(top[0].diff_on(side), top[0])
        if propagate_down[0]:
            summed = (top_diff * self._by_channel(x.data_on(side), x)).sum(axis=2)
            scale.mutable_diff_on(side)[...] = summed.reshape(scale.shape)
        if propagate_down[1]:
            a = scale.data_on(side).reshape(x.shape[0], x.shape[1], 1)
            self._by_channel(x.mutable_diff_on(side), x)[...] = a * top_diff
        if propagate_down[2] and top[0] is not y:
            y.mutable_diff_on(side)[...] = top[0].diff_on(side)
