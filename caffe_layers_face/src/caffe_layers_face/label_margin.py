"""What arcface-caffe's two label-margin layers share: the label bottom, read as one column index per row."""

from __future__ import annotations

import math
from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


def arc_margin_slope(xp: ArrayModule, cos: Array, linear: Array, m: float) -> Array:
    """d cos(acos(c) + m) / dc on the label column: cos m + sin m c / sqrt(1 - c^2), and 1 where the forward
    was linear or sin is 0 (the forks' CPU coefficient, where their formula would divide by zero)."""
    f32 = xp.float32
    sin = xp.sqrt(f32(1) - cos * cos)
    curved = ~linear & (sin > f32(0))
    coeff = f32(math.cos(m)) + f32(math.sin(m)) * cos / xp.where(curved, sin, f32(1))
    return xp.where(curved, coeff, f32(1))


class LabelColumnLayer(Layer):
    """Bottoms (cosines (N, ...), label (N)); one top of the cosines' shape; the label's column is changed."""

    min_bottom_blobs = 2
    exact_num_top_blobs = 1
    skips_negative_labels = False

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top like bottom 0; one label per row of bottom 0."""
        if bottom[0].num_axes < 1 or bottom[1].count != bottom[0].shape[0]:
            raise self.error(f"the label bottom (shape {bottom[1].shape}) must hold one label per row of "
                             f"bottom 0 (shape {bottom[0].shape})")
        top[0].reshape_like(bottom[0])

    def allow_force_backward(self, bottom_index: int) -> bool:
        """force_backward never reaches the label bottom (backward writes no label diff, as the fork)."""
        return bottom_index == 0

    def label_columns(self, side: Side, bottom: Sequence[Blob]) -> tuple[Array, Array]:
        """(row, column) indices of each row's label, refusing labels outside the row (the fork reads
        beyond it); with skips_negative_labels, rows with a negative label are left out
        (as the fork's `if (gt < 0) continue`)."""
        xp = side.xp
        num = bottom[0].shape[0]
        dim = bottom[0].count // num if num else 0
        host = bottom[1].cpu_data() if bottom[1].host_data_current() else bottom[1].gpu_data()
        labels = host.reshape(-1).astype(int)
        bad = labels >= dim if self.skips_negative_labels else (labels >= dim) | (labels < 0)
        if bool(bad.any()):
            kind = "a non-negative label is" if self.skips_negative_labels else "a label is"
            raise self.error(f"{kind} outside [0, {dim}) (the columns of bottom 0)")
        device = bottom[1].data_on(side).reshape(-1).astype(xp.int64)
        rows = xp.arange(num)
        if self.skips_negative_labels:
            keep = device >= 0
            return rows[keep], device[keep]
        return rows, device
