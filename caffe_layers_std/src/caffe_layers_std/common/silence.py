"""Silence: consumes blobs so they are not net outputs; backward zeroes their diffs."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class SilenceLayer(Layer):
    """Takes any number of bottoms and produces nothing."""

    type = "Silence"
    min_bottom_blobs = 1
    exact_num_top_blobs = 0

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """No tops to shape."""

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Nothing to compute."""

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Writes zeros into the diff of each bottom that asks for one."""
        for blob, down in zip(bottom, propagate_down, strict=True):
            if down:
                blob.mutable_diff_on(side)[...] = 0
