"""Filter: keeps the batch items whose selector value is non-zero."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class FilterLayer(Layer):
    """Each top i holds the items of bottom i selected by the last bottom (the selector)."""

    type = "Filter"
    min_bottom_blobs = 2
    min_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """One top per filtered bottom."""
        if len(top) != len(bottom) - 1:
            raise self.error(f"needs one top per bottom except the last (the selector): "
                             f"{len(bottom)} bottoms need {len(bottom) - 1} tops, got {len(top)}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the selector and gives each top one item per non-zero selector value (possibly 0)."""
        selector = bottom[-1]
        num = selector.shape[0] if selector.num_axes else 1
        for i, blob in enumerate(bottom[:-1]):
            if not blob.num_axes or blob.shape[0] != num:
                raise self.error(f"bottom {i} (shape {blob.shape}) must have the same first dimension as "
                                 f"the selector (shape {selector.shape})")
        self.selected = np.flatnonzero(selector.cpu_data().reshape(-1)[:num] != 0)
        for blob, out in zip(bottom[:-1], top, strict=True):
            out.reshape((len(self.selected), *blob.shape[1:]))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the selected items."""
        if not len(self.selected):
            return
        idx = side.xp.asarray(self.selected)
        for blob, out in zip(bottom[:-1], top, strict=True):
            out.mutable_data_on(side)[...] = blob.data_on(side)[idx]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Selected items get their top diff, the others zero; the selector gets none."""
        if propagate_down[-1]:
            raise self.error("cannot back-propagate to its selector bottom (the last bottom); remove "
                             "force_backward or set propagate_down: false for it")
        idx = side.xp.asarray(self.selected)
        for i, (blob, out) in enumerate(zip(bottom[:-1], top, strict=True)):
            if not propagate_down[i]:
                continue
            diff = blob.mutable_diff_on(side)
            diff[...] = 0
            if len(self.selected):
                diff[idx] = out.diff_on(side)
