"""Caffe's Pooling layer: MAX (with an optional argmax top), AVE and STOCHASTIC, with Caffe's window rules."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

from caffe_core import runtime
from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.host_threads import parts_for, run_blocks
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.window_layout import WindowLayout
from caffe_layers_vision.workspace import Workspace, shared_scratch

PoolingParameter = caffe_pb2.PoolingParameter
LOWEST = float(np.finfo(np.float32).min)
UNSIGNED = (np.uint8, np.uint16, np.uint32)
# Input bytes pooled at a time, roughly: a block's scratch then stays in cache between the passes over it.
CHUNK_BYTES = 2 * 2**20


class PoolingLayer(Layer):
    """Max, average or stochastic pooling over 2-D windows of a 4-D blob."""

    type = "Pooling"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1
    max_top_blobs = 2
    bottom_num_axes = {0: 4}

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
        self.bottom_shape: tuple[int, ...] = ()
        self.argmax: Array | None = None
        self.unchosen = False

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, pooled_h, pooled_w) with Caffe's rounding and last-window rule; the mask top alike."""
        if bottom[0].shape != self.bottom_shape:
            self._plan(bottom[0].shape)
        for blob in top:
            blob.reshape((*bottom[0].shape[:2], *self.out_size))

    def _plan(self, shape: tuple[int, ...]) -> None:
        """The output size and the blocks of planes pooled at a time, for a new input shape."""
        num, channels, height, width = shape
        self.in_size = (height, width)
        if self.global_pooling:
            self.kernel = (height, width)
        self.out_size = (self._pooled(0), self._pooled(1))
        for axis, name in enumerate(("height", "width")):
            # A kernel that overhangs the padded input by less than the stride still gives Caffe one window.
            if self.out_size[axis] <= 0:
                raise self.error(f"kernel {name} {self.kernel[axis]} is larger than the padded input {name} "
                                 f"{self.in_size[axis]} + 2 * {self.pad[axis]}: no window fits "
                                 f"(stride {self.stride[axis]})")
        # Unpadded, a stride longer than the kernel can leave trailing windows starting past the input.
        self.nonempty_size = tuple(min(out, -(-(size + pad) // stride)) for out, size, pad, stride
                                   in zip(self.out_size, self.in_size, self.pad, self.stride, strict=True))
        self.planes = num * channels
        values = self.planes * height * width
        # At least one block per host thread, which pool their blocks side by side on the host.
        blocks = max(parts_for(values, self.planes), round(4 * values / CHUNK_BYTES))
        step = -(-self.planes // blocks)
        layouts = {count: WindowLayout(count, self.in_size, self.out_size, self.kernel, self.stride, self.pad)
                   for count in {min(step, self.planes), self.planes % step or step}}
        self.chunks = [(slice(start, min(start + step, self.planes)), layouts[min(step, self.planes - start)])
                       for start in range(0, self.planes, step)]
        self.bottom_shape = shape

    def _rounded(self, axis: int) -> int:
        """The windows along an axis before the last-window rule: Caffe's ceil (or floor) rounding."""
        size, kernel, pad, stride = self.in_size[axis], self.kernel[axis], self.pad[axis], self.stride[axis]
        floor = self.layer_param.pooling_param.round_mode == PoolingParameter.FLOOR
        rounding = math.floor if floor else math.ceil
        return int(rounding((size + 2 * pad - kernel) / stride)) + 1

    def _pooled(self, axis: int) -> int:
        size, pad, stride = self.in_size[axis], self.pad[axis], self.stride[axis]
        pooled = self._rounded(axis)
        if any(self.pad) and (pooled - 1) * stride >= size + pad:
            # Caffe drops a last window that starts past the image on both axes once either axis is padded.
            pooled -= 1
        return pooled

    # ----- constants of the window geometry -----
    def _geometry(self) -> tuple:
        """What the windows' index and size constants depend on."""
        return self.planes, self.in_size, self.out_size, self.kernel, self.stride, self.pad

    def _starts(self, axis: int) -> Array:
        return np.arange(self.out_size[axis]) * self.stride[axis] - self.pad[axis]

    def _plane_starts(self) -> Array:
        return np.arange(self.planes).reshape(-1, 1, 1) * (self.in_size[0] * self.in_size[1])

    def _window_starts(self) -> Array:
        """One before each window's first element, as a flat index into the whole input."""
        within = self._starts(0)[:, None] * self.in_size[1] + self._starts(1)[None, :]
        return self._plane_starts() + within - 1

    def _kernel_offsets(self) -> Array:
        """Each kernel offset's element, h * W + w from its window's first, in scan order."""
        rows, cols = np.divmod(np.arange(self.kernel[0] * self.kernel[1]), self.kernel[1])
        return rows * self.in_size[1] + cols

    def _offset_elements(self) -> Array:
        """(kernel offset, window): h * W + w of the element each kernel offset of each window sees in its
        plane, or a negative value no chosen index takes where it sees padding or overhang."""
        rows = self._starts(0)[None, :] + np.arange(self.kernel[0])[:, None]
        cols = self._starts(1)[None, :] + np.arange(self.kernel[1])[:, None]
        inside = [(0 <= at) & (at < size) for at, size in zip((rows, cols), self.in_size, strict=True)]
        within = rows[:, None, :, None] * self.in_size[1] + cols[None, :, None, :]
        seen = inside[0][:, None, :, None] & inside[1][None, :, None, :]
        outside = np.iinfo(np.intp).min // 2
        return np.where(seen, within, outside).reshape(-1, *self.out_size)

    def _pool_sizes(self, xp: ArrayModule) -> Array:
        """AVE divisors: each window clipped to the padded extent [-pad, size + pad)."""
        return self.workspace.constant(xp, "pool_sizes", self._geometry(), self._window_areas)

    def _window_areas(self) -> Array:
        sizes = []
        for axis in range(2):
            starts = self._starts(axis)
            ends = np.minimum(starts + self.kernel[axis], self.in_size[axis] + self.pad[axis])
            sizes.append(ends - starts)
        return np.outer(sizes[0], sizes[1]).astype(np.float32)

    def _remember(self, xp: ArrayModule, planes: slice, chosen: Array, mask: Array | None) -> None:
        """Keeps the chosen element of these planes' windows, given as its kernel offset + 1 (0: none), as a
        flat index into the input (-1: none); writes Caffe's mask top (h * W + w in the plane) if asked."""
        assert self.argmax is not None
        argmax = self.argmax[planes]
        argmax[...] = chosen
        # Asking the device whether any window chose nothing would cost a copy every forward: mark always.
        unchosen = not bool(argmax.all()) if isinstance(argmax, np.ndarray) else True
        argmax += self.workspace.constant(xp, "starts", self._geometry(), self._window_starts)[planes]
        if unchosen:
            none = chosen == 0
            xp.copyto(argmax, -1, where=none)
            self.unchosen = True
        if mask is not None:
            xp.subtract(argmax, self.workspace.constant(xp, "plane_starts", self._geometry(),
                                                        self._plane_starts)[planes], out=mask)
            if unchosen:
                xp.copyto(mask, -1, where=none)

    # ----- forward -----
    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Pools each window; MAX and STOCHASTIC remember the chosen element for backward."""
        xp = side.xp
        x = bottom[0].data_on(side).reshape(self.planes, -1)
        out = top[0].mutable_data_on(side).reshape(self.planes, *self.out_size)
        self.argmax, self.unchosen = None, False
        if self.method == PoolingParameter.MAX:
            mask = top[1].mutable_data_on(side).reshape(out.shape) if len(top) > 1 else None
            if self.backward_needed or mask is not None:
                self.argmax = self.workspace.array(xp, "argmax", out.shape, np.intp)
            run_blocks(xp, [
                functools.partial(self._forward_max, xp, layout, planes, x[planes], out[planes],
                                  None if mask is None else mask[planes])
                for planes, layout in self.chunks])
        elif self.method == PoolingParameter.AVE:
            run_blocks(xp, [functools.partial(self._forward_ave, xp, layout, x[planes], out[planes])
                                  for planes, layout in self.chunks])
        elif self.method == PoolingParameter.STOCHASTIC:
            self._forward_stochastic(xp, x, out)
        else:
            raise self.error(f"unknown pooling method {self.method}")

    def _forward_max(self, xp: ArrayModule, layout: WindowLayout, planes: slice, x: Array, out: Array,
                     mask: Array | None) -> None:
        # As Caffe: each max starts at -FLT_MAX and takes an element only when strictly greater, so the first
        # maximum in scan order wins, NaN never does, and a window of nothing above -FLT_MAX chooses none.
        scratch = shared_scratch()
        phases = layout.load(xp, x, LOWEST, scratch, "pool.input")
        if self.argmax is None:
            self._forward_max_values(xp, layout, phases, out, scratch)
            return
        offsets = self._kernel_offsets()
        index_type = next(kind for kind in UNSIGNED if offsets[-1] < np.iinfo(kind).max)
        best = scratch.array(xp, "pool.best", layout.work_shape)
        # Named by type, so that layers of both types do not reallocate each other's.
        kind = np.dtype(index_type).name
        chosen = scratch.array(xp, f"pool.chosen.{kind}", layout.work_shape, index_type)
        better = layout.active(scratch.array(xp, "pool.better", layout.work_shape, np.bool_))
        step = layout.active(scratch.array(xp, f"pool.step.{kind}", layout.work_shape, index_type))
        best_run, chosen_run = layout.active(best), layout.active(chosen)
        windows = zip(layout.windows(phases), offsets.tolist(), strict=True)
        (_, window), offset = next(windows)
        xp.greater(window, LOWEST, out=better)
        xp.fmax(window, LOWEST, out=best_run)
        xp.multiply(better.view(np.uint8), index_type(offset + 1), out=chosen_run)
        for (_, window), offset in windows:
            xp.greater(window, best_run, out=better)
            xp.fmax(best_run, window, out=best_run)
            # A window takes only input elements, whose offsets grow with the scan: the largest offset marked
            # better is the last.
            xp.multiply(better.view(np.uint8), index_type(offset + 1), out=step)
            xp.maximum(chosen_run, step, out=chosen_run)
        out[...] = layout.valid(best)
        if self.argmax is not None:
            self._remember(xp, planes, layout.valid(chosen), mask)

    def _forward_max_values(self, xp: ArrayModule, layout: WindowLayout, phases: Array, out: Array,
                            scratch: Workspace) -> None:
        """The windows' maxima alone, where nothing reads which element was chosen."""
        best = scratch.array(xp, "pool.best", layout.work_shape)
        best_run = layout.active(best)
        windows = layout.windows(phases)
        xp.fmax(next(windows)[1], LOWEST, out=best_run)
        for _, window in windows:
            xp.fmax(best_run, window, out=best_run)
        out[...] = layout.valid(best)

    def _forward_ave(self, xp: ArrayModule, layout: WindowLayout, x: Array, out: Array) -> None:
        scratch = shared_scratch()
        # Sums over junk windows would see stale values, and overflow on some.
        phases = layout.load(xp, x, 0.0, scratch, "pool.input", clean=True)
        total = scratch.array(xp, "pool.total", layout.work_shape)
        run = layout.active(total)
        run.fill(0)
        for _, window in layout.windows(phases):
            run += window
        xp.divide(layout.valid(total), self._pool_sizes(xp), out=out)

    def _forward_stochastic(self, xp: ArrayModule, x: Array, out: Array) -> None:
        layout = WindowLayout(self.planes, self.in_size, self.out_size, self.kernel, self.stride, self.pad)
        phases = layout.load(xp, x, 0.0, shared_scratch(), "pool.input")
        stack = shared_scratch().array(xp, "pool.stack", (*out.shape, self.kernel[0] * self.kernel[1]))
        for offset_id, window in layout.windows(phases, views=True):
            stack[..., offset_id] = window
        if self.phase == caffe_pb2.TEST:
            # Caffe's test-time stochastic pooling: the probability-weighted average of each window.
            total = stack.sum(axis=-1) + np.finfo(np.float32).tiny
            out[...] = (stack * stack).sum(axis=-1) / total
            return
        cumulative = xp.cumsum(stack, axis=-1)
        uniform = xp.asarray(runtime.rng().uniform(out.shape, 0.0, 1.0))
        threshold = uniform * cumulative[..., -1]
        chosen = xp.argmax(cumulative >= threshold[..., None], axis=-1)
        out[...] = xp.take_along_axis(stack, chosen[..., None], axis=-1)[..., 0]
        offsets = self.workspace.constant(xp, "offsets", self._geometry(), self._kernel_offsets)
        picked = offsets[chosen] + 1
        rows, cols = self.nonempty_size
        picked[:, rows:, :] = 0
        picked[:, :, cols:] = 0
        self.argmax = self.workspace.array(xp, "argmax", out.shape, np.intp)
        self._remember(xp, slice(None), picked, None)

    # ----- backward -----
    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Routes each top diff to its chosen element (MAX, STOCHASTIC) or over its window (AVE)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        top_diff = top[0].diff_on(side).reshape(self.planes, *self.out_size)
        bottom_diff = bottom[0].mutable_diff_on(side).reshape(self.planes, -1)
        if self.method == PoolingParameter.AVE:
            run_blocks(xp, [functools.partial(self._backward_ave, xp, layout, top_diff[planes],
                                                    bottom_diff[planes]) for planes, layout in self.chunks])
            return
        if self.argmax is None:
            # Test-phase stochastic pooling chooses no element, so nothing flows back.
            bottom_diff.fill(0)
            return
        # Caffe routes through the mask top as it stands at backward.
        mask = top[1].data_on(side).reshape(top_diff.shape) if len(top) > 1 else None
        plane_starts = self.workspace.constant(xp, "plane_starts", self._geometry(), self._plane_starts)
        if xp is not np:
            for planes, layout in self.chunks:
                chosen = self.argmax[planes] - plane_starts[planes] if mask is None else mask[planes]
                self._backward_max_in_window_order(xp, layout, chosen, top_diff[planes], bottom_diff[planes])
            return
        run_blocks(xp, [functools.partial(self._backward_max_on_host, planes, mask, plane_starts,
                                                top_diff[planes], bottom_diff) for planes, _ in self.chunks])

    def _backward_max_on_host(self, planes: slice, mask: Array | None, plane_starts: Array, diff: Array,
                              bottom_diff: Array) -> None:
        if mask is None:
            # backward_on comes here only with an argmax kept.
            assert self.argmax is not None
            index = self.argmax[planes]
        else:
            index = mask[planes].astype(np.intp)
            index += plane_starts[planes]
        bottom_diff[planes].fill(0)
        if self.unchosen:
            chosen = index >= 0 if mask is None else mask[planes] >= 0
            index, diff = index[chosen], diff[chosen]
        # add.at adds in top order in float32, the same sums as Caffe's loop over the top.
        np.add.at(bottom_diff.reshape(-1), index.reshape(-1), diff.reshape(-1))

    def _backward_max_in_window_order(self, xp: ArrayModule, layout: WindowLayout, chosen: Array,
                                      diff: Array, bottom_diff: Array) -> None:
        """On the device each element sums the diffs of the windows that chose it (`chosen`: h * W + w in
        the plane) in window order, from zero, as Caffe's MaxPoolBackward kernel does (and so as its CPU loop
        does); atomic adds would land in any order. A mask entry outside its window routes nothing, as in
        that kernel."""
        target = layout.target(xp, bottom_diff, shared_scratch(), "pool.diff")
        elements = self.workspace.constant(xp, "offset_elements", self._geometry(), self._offset_elements)
        # Later kernel offsets first: an element's windows then come in top order, as the kernel scans them.
        for offset_id, window in reversed(list(layout.windows(target, views=True))):
            window += xp.where(chosen == elements[offset_id], diff, np.float32(0))
        layout.store(target, bottom_diff)

    def _backward_ave(self, xp: ArrayModule, layout: WindowLayout, top_diff: Array,
                      bottom_diff: Array) -> None:
        scratch = shared_scratch()
        spread = scratch.array(xp, "pool.spread", layout.work_shape)
        if layout.flat:
            spread.fill(0)
        xp.divide(top_diff, self._pool_sizes(xp), out=layout.valid(spread))
        spread = layout.active(spread)
        target = layout.target(xp, bottom_diff, scratch, "pool.diff")
        # Later windows first: each element then sums its windows' shares in top order, as Caffe's loop.
        for _, window in reversed(list(layout.windows(target))):
            window += spread
        layout.store(target, bottom_diff)
