"""Caffe's Pooling layer: MAX (with an optional argmax top), AVE and STOCHASTIC, with Caffe's window rules."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.workspace import Workspace

PoolingParameter = caffe_pb2.PoolingParameter


class PoolingLayer(Layer):
    """Max, average or stochastic pooling over 2-D windows of a 4-D blob."""

    type = "Pooling"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1
    max_top_blobs = 2

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        super().__init__(param)
        self.method = param.pooling_param.pool
        self.max_top_blobs = 2 if self.method == PoolingParameter.MAX else 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads kernel, pad and stride with Caffe's checks."""
        pool = self.layer_param.pooling_param
        self.global_pooling = pool.global_pooling
        has_size, has_h, has_w = (pool.HasField(f) for f in ("kernel_size", "kernel_h", "kernel_w"))
        if self.global_pooling:
            if has_size or has_h or has_w:
                raise self.error("with global_pooling: true the filter size cannot be specified")
        elif has_size and (has_h or has_w):
            raise self.error("filter size is kernel_size OR kernel_h and kernel_w; not both")
        elif not has_size and not (has_h and has_w):
            raise self.error("for non-square filters both kernel_h and kernel_w are required")
        if pool.HasField("pad") and (pool.HasField("pad_h") or pool.HasField("pad_w")) or \
                pool.HasField("pad_h") != pool.HasField("pad_w"):
            raise self.error("pad is pad OR pad_h and pad_w are required")
        if pool.HasField("stride") and (pool.HasField("stride_h") or pool.HasField("stride_w")) or \
                pool.HasField("stride_h") != pool.HasField("stride_w"):
            raise self.error("stride is stride OR stride_h and stride_w are required")
        self.kernel = (pool.kernel_size,) * 2 if has_size else (pool.kernel_h, pool.kernel_w)
        if not self.global_pooling and min(self.kernel) <= 0:
            raise self.error("filter dimensions cannot be zero")
        self.pad = (pool.pad_h, pool.pad_w) if pool.HasField("pad_h") else (pool.pad,) * 2
        self.stride = (pool.stride_h, pool.stride_w) if pool.HasField("stride_h") else (pool.stride,) * 2
        if min(self.stride) <= 0:
            raise self.error("stride dimensions cannot be zero")
        if self.global_pooling and (any(self.pad) or self.stride != (1, 1)):
            raise self.error("with global_pooling: true only pad = 0 and stride = 1 are allowed "
                             f"(pad {list(self.pad)}, stride {list(self.stride)})")
        if any(self.pad):
            if self.method not in (PoolingParameter.AVE, PoolingParameter.MAX):
                raise self.error("padding is implemented only for average and max pooling")
            if not self.global_pooling and (self.pad[0] >= self.kernel[0] or self.pad[1] >= self.kernel[1]):
                raise self.error(f"pad {list(self.pad)} must be smaller than the kernel {list(self.kernel)}")
        self.workspace = Workspace()
        self.chosen: Any = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, pooled_h, pooled_w) with Caffe's rounding and last-window rule; the mask top alike."""
        if bottom[0].num_axes != 4:
            raise self.error(f"input must have 4 axes (num, channels, height, width), got shape "
                             f"{list(bottom[0].shape)}")
        num, channels, height, width = bottom[0].shape
        self.in_size = (height, width)
        if self.global_pooling:
            self.kernel = (height, width)
        self.out_size = tuple(self._pooled(axis) for axis in range(2))
        for axis, name in enumerate(("height", "width")):
            # A kernel that overhangs the padded input by less than the stride still gives Caffe one window.
            if self.out_size[axis] <= 0:
                raise self.error(f"kernel {name} {self.kernel[axis]} is larger than the padded input {name} "
                                 f"{self.in_size[axis]} + 2 * {self.pad[axis]}: no window fits "
                                 f"(stride {self.stride[axis]})")
        # Unpadded, a stride longer than the kernel can leave trailing windows starting past the input.
        self.nonempty_size = tuple(min(out, -(-(size + pad) // stride)) for out, size, pad, stride
                                   in zip(self.out_size, self.in_size, self.pad, self.stride, strict=True))
        for blob in top:
            blob.reshape((num, channels, *self.out_size))

    def _pooled(self, axis: int) -> int:
        size, kernel, pad, stride = self.in_size[axis], self.kernel[axis], self.pad[axis], self.stride[axis]
        floor = self.layer_param.pooling_param.round_mode == PoolingParameter.FLOOR
        rounding = math.floor if floor else math.ceil
        pooled = int(rounding((size + 2 * pad - kernel) / stride)) + 1
        if any(self.pad) and (pooled - 1) * stride >= size + pad:
            # Caffe drops a last window that starts past the image on both axes once either axis is padded.
            pooled -= 1
        return pooled

    # ----- windows over a padded copy -----
    def _starts(self, axis: int) -> np.ndarray:
        return np.arange(self.out_size[axis]) * self.stride[axis] - self.pad[axis]

    def _padded_shape(self, leading: tuple[int, ...]) -> tuple[int, ...]:
        """Room for the left/top padding and for every window, including ones that overhang the far side."""
        extent = tuple(self.pad[a] + max(self.in_size[a], (self.out_size[a] - 1) * self.stride[a]
                                         - self.pad[a] + self.kernel[a]) for a in range(2))
        return (*leading, *extent)

    def _padded(self, xp: Any, x: Any, fill: float, name: str) -> Any:
        """x inside a buffer bordered by `fill`, wide enough for every (overhanging) window."""
        padded = self.workspace.bordered(xp, name, self._padded_shape(x.shape[:2]), fill)
        self._inner(padded)[...] = x
        return padded

    def _windows(self, padded: Any) -> Iterator[tuple[int, Any]]:
        """(offset id, the (N, C, pooled_h, pooled_w) view at that kernel offset); h then w, as Caffe."""
        (oh, ow), (sh, sw) = self.out_size, self.stride
        for ki in range(self.kernel[0]):
            for kj in range(self.kernel[1]):
                yield ki * self.kernel[1] + kj, padded[:, :, ki: ki + sh * (oh - 1) + 1: sh,
                                                       kj: kj + sw * (ow - 1) + 1: sw]

    def _inner(self, padded: Any) -> Any:
        (top, left), (height, width) = self.pad, self.in_size
        return padded[:, :, top: top + height, left: left + width]

    def chosen_index(self, xp: Any) -> Any:
        """Each window's chosen element (MAX, STOCHASTIC) as h * W + w in its plane; -1 if empty."""
        offsets = self.workspace.constant(xp, "offsets", self._geometry(), self._kernel_offsets)
        starts = self.workspace.constant(xp, "starts", self._geometry(), self._window_starts)
        # Fancy indexing by the small chosen ids is several times faster than take(..., out=) with them.
        index = offsets[self.chosen]
        index += starts
        rows, cols = self.nonempty_size
        index[..., rows:, :] = -1
        index[..., :, cols:] = -1
        return index

    def _geometry(self) -> tuple:
        """What the windows' index and size constants depend on."""
        return self.in_size, self.out_size, self.kernel, self.stride, self.pad

    def _kernel_offsets(self) -> np.ndarray:
        kernel_rows, kernel_cols = np.divmod(np.arange(self.kernel[0] * self.kernel[1]), self.kernel[1])
        return kernel_rows * self.in_size[1] + kernel_cols

    def _window_starts(self) -> np.ndarray:
        return self._starts(0)[:, None] * self.in_size[1] + self._starts(1)[None, :]

    def _pool_sizes(self, xp: Any) -> Any:
        """AVE divisors: each window clipped to the padded extent [-pad, size + pad)."""
        return self.workspace.constant(xp, "pool_sizes", self._geometry(), self._window_areas)

    def _window_areas(self) -> np.ndarray:
        sizes = []
        for axis in range(2):
            starts = self._starts(axis)
            ends = np.minimum(starts + self.kernel[axis], self.in_size[axis] + self.pad[axis])
            sizes.append(ends - starts)
        return np.outer(sizes[0], sizes[1]).astype(np.float32)

    # ----- forward -----
    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Pools each window; MAX and STOCHASTIC remember the chosen element for backward."""
        xp = side.xp
        x = bottom[0].data_on(side)
        out = top[0].mutable_data_on(side)
        if self.method == PoolingParameter.MAX:
            self._forward_max(xp, x, out)
            if len(top) > 1:
                top[1].mutable_data_on(side)[...] = self.chosen_index(xp)
        elif self.method == PoolingParameter.AVE:
            padded = self._padded(xp, x, 0.0, "padded")
            out.fill(0)
            for _, window in self._windows(padded):
                out += window
            out /= self._pool_sizes(xp)
        elif self.method == PoolingParameter.STOCHASTIC:
            self._forward_stochastic(xp, x, out)
        else:
            raise self.error(f"unknown pooling method {self.method}")

    def _forward_max(self, xp: Any, x: Any, out: Any) -> None:
        # -FLT_MAX, as Caffe starts each max: an empty window gives it, not -inf.
        padded = self._padded(xp, x, float(np.finfo(np.float32).min), "padded")
        count = self.kernel[0] * self.kernel[1]
        index_type = np.int8 if count <= 127 else np.int16 if count <= 32767 else np.int32
        chosen = self.workspace.array(xp, "chosen", out.shape, index_type)
        step = self.workspace.array(xp, "step", out.shape, index_type)
        better = self.workspace.array(xp, "better", out.shape, np.bool_)
        window_copy = self.workspace.array(xp, "window", out.shape)
        chosen.fill(0)
        windows = self._windows(padded)
        out[...] = next(windows)[1]
        for offset_id, window in windows:
            # One strided read per offset (into a contiguous copy); strictly greater keeps the first maximum
            # in Caffe's scan order, and chosen += (id - chosen) * better selects faster than a masked copy.
            window_copy[...] = window
            xp.greater(window_copy, out, out=better)
            xp.maximum(out, window_copy, out=out)
            xp.subtract(index_type(offset_id), chosen, out=step)
            step *= better
            chosen += step
        self.chosen = chosen

    def _forward_stochastic(self, xp: Any, x: Any, out: Any) -> None:
        padded = self._padded(xp, x, 0.0, "padded")
        stack = self.workspace.array(xp, "stack", (*out.shape, self.kernel[0] * self.kernel[1]))
        for offset_id, window in self._windows(padded):
            stack[..., offset_id] = window
        if self.phase == caffe_pb2.TEST:
            # Caffe's test-time stochastic pooling: the probability-weighted average of each window.
            total = stack.sum(axis=-1) + np.finfo(np.float32).tiny
            out[...] = (stack * stack).sum(axis=-1) / total
            self.chosen = None
            return
        cumulative = xp.cumsum(stack, axis=-1)
        uniform = xp.asarray(runtime.rng().uniform(out.shape, 0.0, 1.0))
        threshold = uniform * cumulative[..., -1]
        chosen = xp.argmax(cumulative >= threshold[..., None], axis=-1)
        out[...] = xp.take_along_axis(stack, chosen[..., None], axis=-1)[..., 0]
        self.chosen = chosen

    # ----- backward -----
    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Routes each top diff to its chosen element (MAX, STOCHASTIC) or over its window (AVE)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        top_diff = top[0].diff_on(side)
        bottom_diff = bottom[0].mutable_diff_on(side)
        if self.method == PoolingParameter.AVE:
            padded = self.workspace.zeros(xp, "padded_diff", self._padded_shape(bottom_diff.shape[:2]))
            spread = top_diff / self._pool_sizes(xp)
            for _, window in self._windows(padded):
                window += spread
            bottom_diff[...] = self._inner(padded)
            return
        if self.chosen is None:
            # Test-phase stochastic pooling chooses no element, so nothing flows back.
            bottom_diff.fill(0)
            return
        index = top[1].data_on(side).astype(np.int64) if len(top) > 1 else self.chosen_index(xp)
        rows, cols = self.nonempty_size
        if (rows, cols) != self.out_size:
            # An empty window chose no element, so nothing flows back from it.
            index, top_diff = index[:, :, :rows, :cols], top_diff[:, :, :rows, :cols]
        num, channels = bottom_diff.shape[:2]
        plane = self.in_size[0] * self.in_size[1]
        index += xp.arange(num * channels, dtype=np.int64).reshape(num, channels, 1, 1) * plane
        # add.at adds in top order in float32, the same sums as Caffe's loop over the top.
        bottom_diff.fill(0)
        xp.add.at(bottom_diff.reshape(-1), index.reshape(-1), top_diff.reshape(-1))

