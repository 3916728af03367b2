"""Split: copies one blob to several tops (sharing data) and sums their gradients."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class SplitLayer(Layer):
    """Shares the bottom's data with every top; backward adds the tops' diffs into the bottom's."""

    type = "Split"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Every top takes the bottom's shape and data."""
        for t in top:
            if t is bottom[0]:
                raise self.error("does not allow in-place computation")
            t.reshape_like(bottom[0])
            t.share_data(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Nothing to compute: the tops share the bottom's data."""

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = sum of the tops' diffs."""
        if not propagate_down[0]:
            return
        out = bottom[0].mutable_diff_on(side)
        out[...] = top[0].diff_on(side)
        for t in top[1:]:
            out += t.diff_on(side)
