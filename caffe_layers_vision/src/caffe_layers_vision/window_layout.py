"""Pooling windows in polyphase layout: each kernel offset's values for all windows lie in one contiguous run.

Row q, column r of phase (a, b) holds padded input row q * stride_h + a, column r * stride_w + b, so
the values that kernel offset (i, j) sees in every window are phase (i % stride_h, j % stride_w) shifted
by (i // stride_h, j // stride_w). With the phases' planes (N * C of them, each `extent` rows by columns)
stored one after another, that shift is a single flat offset: a kernel offset's values for all windows are
one slice of a phase, and the windows' results a flat array in the same layout, whose rows and columns
past the output are junk that nothing reads back.
"""

from __future__ import annotations

from collections.abc import Iterator

from caffe_core.array_types import Array, ArrayModule
from caffe_layers_vision.workspace import Workspace

# Flat runs cover the junk rows and columns too; past this many stored values per window, per-offset views of
# the phases (one strided pass per kernel offset) cost less.
FLAT_OVERHEAD_LIMIT = 4


class WindowLayout:
    """Where the input of each pooling window lies, for `planes` input planes and Caffe's window geometry."""

    def __init__(self, planes: int, in_size: tuple[int, int], out_size: tuple[int, int],
                 kernel: tuple[int, int], stride: tuple[int, int], pad: tuple[int, int]) -> None:
        self.planes, self.in_size = planes, in_size
        self.out_size, self.kernel, self.stride, self.pad = out_size, kernel, stride, pad
        # A stride longer than the kernel leaves phases no window reads.
        self.phases = (min(stride[0], kernel[0]), min(stride[1], kernel[1]))
        self.extent = tuple(out + (k - 1) // s for out, k, s in zip(out_size, kernel, stride, strict=True))
        plane = self.extent[0] * self.extent[1]
        self.count = self.planes * plane
        self.run = (self.planes - 1) * plane + (out_size[0] - 1) * self.extent[1] + out_size[1]
        self.flat = self.count <= FLAT_OVERHEAD_LIMIT * self.planes * out_size[0] * out_size[1]
        # Stride 1 without padding or overhang: the input itself is the one phase.
        self.identity = stride == (1, 1) and pad == (0, 0) and self.extent == in_size
        self.offsets = [((i % stride[0]) * self.phases[1] + j % stride[1], i // stride[0], j // stride[1])
                        for i in range(kernel[0]) for j in range(kernel[1])]
        axis_spans = [[self._span(axis, phase) for phase in range(self.phases[axis])] for axis in range(2)]
        self.boxes = [(rows, cols) for rows in axis_spans[0] for cols in axis_spans[1]]
        # Input rows past the last window, or between windows of a stride longer than the kernel, are in none.
        self.covers_input = all(
            self.phases[axis] == stride[axis]
            and all(count == len(range(first, self.in_size[axis], stride[axis]))
                    for _, first, count, _ in axis_spans[axis])
            for axis in range(2))

    def _span(self, axis: int, phase: int) -> tuple[int, int, int, int]:
        """On `axis`, this phase's rows that windows read: (first one holding input, its input row, how many
        hold input, how many windows read)."""
        kernel, stride, pad, size = self.kernel[axis], self.stride[axis], self.pad[axis], self.in_size[axis]
        last_offset = phase + (kernel - 1 - phase) // stride * stride
        read = self.out_size[axis] + last_offset // stride
        first = (phase - pad) % stride
        start = (first + pad - phase) // stride
        count = max(0, min(len(range(first, size, stride)), read - start))
        return start, first, count, read

    @property
    def work_shape(self) -> tuple[int, ...]:
        """Shape of an array holding one value per window, in the layout `windows` yields."""
        return (self.count,) if self.flat else (self.planes, *self.out_size)

    def active(self, work: Array) -> Array:
        """The part of a `work_shape` array that lines up with the views `windows` yields."""
        return work[:self.run] if self.flat else work

    def valid(self, work: Array) -> Array:
        """The (N * C, pooled_h, pooled_w) windows' values of a `work_shape` array."""
        if not self.flat:
            return work
        (rows, cols), (height, width) = self.out_size, self.extent
        return work.reshape(self.planes, height, width)[:, :rows, :cols]

    def load(self, xp: ArrayModule, x: Array, fill: float, scratch: Workspace, name: str,
             clean: bool = False) -> Array:
        """x (planes, H * W) as (phases, count), with `fill` where windows read padding or overhang.

        What only junk results read keeps whatever the buffer held, unless `clean` fills it too.
        """
        if self.identity:
            return x.reshape(1, -1)
        phases = scratch.array(xp, name, (len(self.boxes), self.count))
        planes = x.reshape(self.planes, *self.in_size)
        if clean:
            phases.fill(fill)
        for phase, box in zip(self._planes(phases), self.boxes, strict=True):
            (row, _, rows, read_rows), (col, _, cols, read_cols) = box
            if not clean:
                for part in (phase[:, :row, :read_cols], phase[:, row + rows:read_rows, :read_cols],
                             phase[:, row:row + rows, :col], phase[:, row:row + rows, col + cols:read_cols]):
                    if part.size:
                        part.fill(fill)
            if rows and cols:
                phase[:, row:row + rows, col:col + cols] = self._input_part(planes, box)
        return phases

    def target(self, xp: ArrayModule, diff: Array, scratch: Workspace, name: str) -> Array:
        """A zeroed (phases, count) array to add window diffs into; `store` moves it into `diff`."""
        if self.identity:
            target = diff.reshape(1, -1)
        else:
            target = scratch.array(xp, name, (len(self.boxes), self.count))
        target.fill(0)
        return target

    def store(self, target: Array, diff: Array) -> None:
        """Writes the input's part of a polyphase `target` into `diff` (planes, H * W), zero elsewhere."""
        if self.identity:
            return
        planes = diff.reshape(self.planes, *self.in_size)
        if not self.covers_input:
            planes.fill(0)
        for phase, box in zip(self._planes(target), self.boxes, strict=True):
            (row, _, rows, _), (col, _, cols, _) = box
            if rows and cols:
                self._input_part(planes, box)[...] = phase[:, row:row + rows, col:col + cols]

    def windows(self, phases: Array, views: bool = False) -> Iterator[tuple[int, Array]]:
        """(offset id, its values for all windows) per kernel offset, h then w as Caffe scans.

        Flat runs lined up with `active(work)`, or with `views` (or when runs would not pay) views shaped
        (N * C, pooled_h, pooled_w).
        """
        (rows, cols), (height, width) = self.out_size, self.extent
        for offset_id, (phase, down, right) in enumerate(self.offsets):
            if self.flat and not views:
                start = down * width + right
                yield offset_id, phases[phase, start: start + self.run]
            else:
                plane = phases[phase].reshape(self.planes, height, width)
                yield offset_id, plane[:, down: down + rows, right: right + cols]

    def _planes(self, phases: Array) -> list[Array]:
        return [phase.reshape(self.planes, *self.extent) for phase in phases]

    def _input_part(self, planes: Array, box: tuple[tuple[int, ...], tuple[int, ...]]) -> Array:
        (_, first_row, rows, _), (_, first_col, cols, _) = box
        (step_h, step_w) = self.stride
        return planes[:, first_row: first_row + step_h * (rows - 1) + 1: step_h,
                      first_col: first_col + step_w * (cols - 1) + 1: step_w]
