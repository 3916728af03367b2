"""BatchReindex: picks (and may repeat or permute) items of the batch by an index bottom."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class BatchReindexLayer(Layer):
    """`top[i] = bottom[0][indices[i]]`; backward adds each top item's diff into its source item."""

    type = "BatchReindex"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top has one item per index."""
        if bottom[1].num_axes != 1:
            raise self.error(f"the index bottom must be 1-D, got shape {bottom[1].shape}")
        top[0].reshape((bottom[1].shape[0], *bottom[0].shape[1:]))

    def _indices(self, side: Side, bottom: Sequence[Blob]) -> Array:
        idx = bottom[1].data_on(side).astype(side.xp.int64)
        bad = (idx < 0) | (idx >= bottom[0].shape[0])
        if bool(bad.any()):
            raise self.error(f"the index bottom holds {int(idx[int(bad.argmax())])}; every index must lie in "
                             f"[0, {bottom[0].shape[0]}), the batch size of bottom 0")
        return idx

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Gathers the indexed items."""
        idx = self._indices(side, bottom)
        if top[0].count == 0:
            return
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)[idx]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Scatter-adds the top diffs into the items they came from; the index bottom gets none."""
        if propagate_down[1]:
            raise self.error("cannot back-propagate to its index bottom (bottom 1); remove force_backward "
                             "or set propagate_down: false for it")
        if not propagate_down[0]:
            return
        xp = side.xp
        out = bottom[0].mutable_diff_on(side)
        out[...] = 0
        if top[0].count == 0:
            return
        idx = self._indices(side, bottom)
        flat = out.reshape(out.shape[0], -1)
        scatter_add(xp, flat, idx, top[0].diff_on(side).reshape(idx.shape[0], -1))


def scatter_add(xp: ArrayModule, target: Array, idx: Array, values: Array) -> None:
    """target[idx] += values, adding repeated indices once per occurrence (ufunc.at: numpy, cupy 13+)."""
    xp.add.at(target, idx, values)
