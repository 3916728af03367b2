"""EuclideanLoss: sum((a - b)^2) / (2 N); both bottoms get gradients."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer


class EuclideanLossLayer(LossLayer):
    """Half the mean (over the first axis) squared L2 distance of two equally sized bottoms."""

    type = "EuclideanLoss"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates the buffer that keeps a - b."""
        super().layer_setup(bottom, top)
        self.diff = Blob()

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Both bottoms must have the same size per item."""
        super().reshape(bottom, top)
        if bottom[0].count_between(1) != bottom[1].count_between(1):
            raise self.error(f"inputs must have the same dimension: shapes {bottom[0].shape} and "
                             f"{bottom[1].shape}")
        self.diff.reshape(bottom[0].shape)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """loss = sum((a - b)^2) / N / 2, keeping a - b for backward."""
        xp = side.xp
        diff = self.diff.mutable_data_on(side)
        diff[...] = bottom[0].data_on(side) - bottom[1].data_on(side).reshape(diff.shape)
        flat = diff.reshape(-1)
        top[0].mutable_data_on(side)[...] = xp.dot(flat, flat) / xp.float32(bottom[0].shape[0]) / 2

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """da = (a - b) * w / N and db = -(a - b) * w / N."""
        num = bottom[0].shape[0]
        for i, sign in ((0, 1), (1, -1)):
            if propagate_down[i]:
                alpha = top[0].diff_on(side).reshape(()) * side.xp.float32(sign) / side.xp.float32(num)
                out = bottom[i].mutable_diff_on(side)
                out[...] = (self.diff.data_on(side) * alpha).reshape(out.shape)

    def allow_force_backward(self, bottom_index: int) -> bool:
        """Both bottoms can receive a gradient."""
        return True
