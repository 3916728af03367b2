"""Caffe's LRN layer: local response normalisation across channels or within each channel."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.workspace import Workspace, shared_scratch

LRNParameter = caffe_pb2.LRNParameter


class LRNLayer(Layer):
    """y = x * scale^-beta; scale = k + alpha/n * sum x^2 across channels, or 1 + alpha/n^2 * sum within."""

    type = "LRN"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads lrn_param; local_size must be odd."""
        lrn = self.layer_param.lrn_param
        self.size = int(lrn.local_size)
        if self.size % 2 != 1:
            raise self.error(f"LRN only supports odd values for local_size (got {self.size})")
        self.alpha, self.beta, self.k = float(lrn.alpha), float(lrn.beta), float(lrn.k)
        self.region = lrn.norm_region
        if self.region not in (LRNParameter.ACROSS_CHANNELS, LRNParameter.WITHIN_CHANNEL):
            raise self.error(f"unknown normalization region {self.region}")
        self.workspace = Workspace()
        self.scale: Array | None = None
        self.power: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top takes the bottom's (4-D) shape."""
        top[0].reshape_like(bottom[0])

    def _window_sum(self, xp: ArrayModule, values: Array, axis: int, name: str, work: Workspace) -> Array:
        """The sum over a centred window of local_size along one axis, zero outside the blob."""
        before = (self.size - 1) // 2
        shape = list(values.shape)
        shape[axis] += self.size - 1
        padded = work.bordered(xp, f"lrn:{name}", tuple(shape))
        inner = [slice(None)] * values.ndim
        inner[axis] = slice(before, before + values.shape[axis])
        padded[tuple(inner)] = values
        window = [slice(None)] * values.ndim
        window[axis] = slice(0, values.shape[axis])
        total = padded[tuple(window)].copy()
        for shift in range(1, self.size):
            window[axis] = slice(shift, shift + values.shape[axis])
            total += padded[tuple(window)]
        return total

    def _neighbourhood_sum(self, xp: ArrayModule, values: Array) -> Array:
        # Only a layer that runs backward reuses its buffers across calls; others borrow the shared scratch.
        work = self.workspace if self.backward_needed else shared_scratch()
        if self.region == LRNParameter.ACROSS_CHANNELS:
            return self._window_sum(xp, values, 1, "channels", work)
        return self._window_sum(xp, self._window_sum(xp, values, 2, "rows", work), 3, "columns", work)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Computes and keeps the scale, then y = x * scale^-beta."""
        xp = side.xp
        x = bottom[0].data_on(side)
        if self.region == LRNParameter.ACROSS_CHANNELS:
            self.scale = self._neighbourhood_sum(xp, x * x * xp.float32(self.alpha / self.size))
            self.scale += xp.float32(self.k)
        else:
            # Caffe builds WITHIN_CHANNEL from AVE pooling and a Power layer with shift 1: k plays no part.
            average = self._neighbourhood_sum(xp, x * x) / xp.float32(self.size * self.size)
            self.scale = average * xp.float32(self.alpha) + xp.float32(1.0)
        # Kept for backward, which needs the same power (pow is the costliest step here).
        self.power = self.scale ** xp.float32(-self.beta)
        xp.multiply(x, self.power, out=top[0].mutable_data_on(side))
        if not self.backward_needed:
            self.scale = self.power = None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy * scale^-beta - 2 alpha beta / N * x * sum over the window of dy * y / scale."""
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side)
        y = top[0].data_on(side)
        dy = top[0].diff_on(side)
        neighbours = self.size if self.region == LRNParameter.ACROSS_CHANNELS else self.size * self.size
        accumulated = self._neighbourhood_sum(xp, dy * y / self.scale)
        ratio = xp.float32(2.0 * self.alpha * self.beta / neighbours)
        direct = dy * self.power
        bottom[0].mutable_diff_on(side)[...] = direct - ratio * x * accumulated
