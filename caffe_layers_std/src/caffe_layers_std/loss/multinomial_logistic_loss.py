"""MultinomialLogisticLoss: -log p[label] averaged over the batch; bottom 0 holds probabilities."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LOG_THRESHOLD, LossLayer, read_labels
from caffe_layers_std.rounding import logf, sequential_sum


class MultinomialLogisticLossLayer(LossLayer):
    """-sum_i log(max(p[i, label_i], 1e-20)) / N."""

    type = "MultinomialLogisticLoss"

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """One label per item."""
        super().reshape(bottom, top)
        if bottom[1].count_between(1) != 1:
            raise self.error(f"the label bottom must hold one value per item, got shape {bottom[1].shape}")
        self.num = bottom[0].shape[0]
        self.dim = bottom[0].count // self.num if self.num else 0

    def _picked(self, side: Side, bottom: Sequence[Blob]) -> tuple[Array, Array]:
        xp = side.xp
        labels, _ = read_labels(self, side, bottom[1], self.dim, None)
        labels = labels.reshape(self.num, 1)
        p = bottom[0].data_on(side).reshape(self.num, self.dim)
        picked = xp.maximum(xp.take_along_axis(p, labels, axis=1), xp.float32(LOG_THRESHOLD))
        return labels, picked

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """loss = -sum log(max(p[label], 1e-20)) / N."""
        xp = side.xp
        _, picked = self._picked(side, bottom)
        loss = -sequential_sum(xp, logf(xp, picked).reshape(-1))
        top[0].mutable_data_on(side)[...] = loss / xp.float32(self.num)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dp[label] = -w / N / max(p[label], 1e-20); every other entry is 0."""
        self.refuse_label_backward(propagate_down)
        if not propagate_down[0]:
            return
        xp = side.xp
        labels, picked = self._picked(side, bottom)
        scale = -top[0].diff_on(side).reshape(()) / xp.float32(self.num)
        onehot = xp.arange(self.dim).reshape(1, -1) == labels
        grad = xp.where(onehot, scale / picked, xp.float32(0))
        bottom[0].mutable_diff_on(side).reshape(self.num, self.dim)[...] = grad
