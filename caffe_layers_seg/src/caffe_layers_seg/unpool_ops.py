"""Unpooling through a MAX pooling mask: each value goes to the flat position h * W + w its mask names in the
output plane of its own (num, channel), as SegNet's Upsample and inisis' MaxUnPool loops do; and the layer
both of those are."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


def mask_positions(xp: ArrayModule, mask: Array, out_plane: int) -> tuple[Array, Array]:
    """(positions in the output plane, flat targets in the whole output), both int64 of the values' shape."""
    positions = mask.astype(np.int64)
    planes = mask.shape[0] * mask.shape[1]
    offsets = xp.arange(planes, dtype=np.int64).reshape(mask.shape[0], mask.shape[1], 1, 1) * out_plane
    return positions, positions + offsets


def out_of_range(xp: ArrayModule, positions: Array, out_plane: int) -> int | None:
    """The first mask position outside [0, out_plane), or None when all lie inside."""
    bad = (positions < 0) | (positions >= out_plane)
    if not bool(bad.any()):
        return None
    return int(positions.reshape(-1)[int(xp.argmax(bad.reshape(-1)))])


def winners(xp: ArrayModule, targets: Array, out_count: int) -> Array:
    """For each output element, the flat index of the last value written to it (-1: none)."""
    # The forks write the values in order, so of several values sharing a target the last one stays. Sorting
    # unique keys (target, then source order) finds it with no atomic scatter, alike on numpy and cupy.
    flat = targets.reshape(-1)
    count = flat.size
    keys = xp.sort(flat * count + xp.arange(count, dtype=np.int64))
    sorted_targets = keys // count
    last = xp.ones(count, dtype=bool)
    last[:-1] = sorted_targets[1:] != sorted_targets[:-1]
    chosen = xp.full(out_count, -1, dtype=np.int64)
    chosen[sorted_targets[last]] = keys[last] % count
    return chosen


def scatter(xp: ArrayModule, values: Array, targets: Array, out: Array) -> None:
    """Zero-fills out and writes each value at its target; of duplicate targets the last value stays."""
    chosen = winners(xp, targets, out.size)
    written = chosen >= 0
    flat_out = out.reshape(-1)
    flat_out.fill(0)
    flat_out[written] = values.reshape(-1)[chosen[written]]


def gather(top_diff: Array, targets: Array) -> Array:
    """Each value's share of the top diff: the diff at its target (SegNet's backward)."""
    return top_diff.reshape(-1)[targets.reshape(-1)].reshape(targets.shape)


def gather_winners(xp: ArrayModule, top_diff: Array, targets: Array) -> Array:
    """The true gradient of scatter: the diff at its target for the value that stayed there, else 0."""
    flat_targets = targets.reshape(-1)
    chosen = winners(xp, targets, top_diff.size)
    stayed = chosen[flat_targets] == xp.arange(flat_targets.size, dtype=np.int64)
    grad = xp.where(stayed, top_diff.reshape(-1)[flat_targets], 0)
    return grad.astype(top_diff.dtype).reshape(targets.shape)


class MaskUnpoolLayer(Layer):
    """Writes each value of bottom 0 at the position its mask (bottom 1) names in a zeroed top plane of
    `out_size`. Subclasses set `out_size` and word `out_of_range`; `backward_gathers_winners` says whether
    only the value that stayed at a position gets its diff (the true gradient) or every value does."""

    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4, 1: 4}
    backward_gathers_winners = False
    out_size: tuple[int, int] | None

    def out_of_range(self, position: int, plane: int) -> str:
        """The refusal of a mask position outside the plane of `plane` positions."""
        raise NotImplementedError

    def _targets(self, side: Side, mask: Blob) -> Array:
        assert self.out_size is not None  # set by layer_setup or reshape, which run before forward
        plane = self.out_size[0] * self.out_size[1]
        positions, targets = mask_positions(side.xp, mask.data_on(side), plane)
        bad = out_of_range(side.xp, positions, plane)
        if bad is not None:
            raise self.error(self.out_of_range(bad, plane))
        return targets

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Zeroes the top and writes each value at its mask position (the last of duplicates stays)."""
        targets = self._targets(side, bottom[1])
        scatter(side.xp, bottom[0].data_on(side), targets, top[0].mutable_data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Each value's diff is the top diff at its mask position (with `backward_gathers_winners`, only
        where the value stayed; the mask gets none)."""
        if not propagate_down[0]:
            return
        targets = self._targets(side, bottom[1])
        top_diff = top[0].diff_on(side)
        if self.backward_gathers_winners:
            grad = gather_winners(side.xp, top_diff, targets)
        else:
            grad = gather(top_diff, targets)
        bottom[0].mutable_diff_on(side)[...] = grad
