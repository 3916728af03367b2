"""SigmoidCrossEntropyLoss: cross-entropy of sigmoid(x) against targets, computed stably from the logits."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import NORM, LossLayer, normalization_mode, normalizer
from caffe_layers_std.neuron.sigmoid import sigmoid
from caffe_layers_std.rounding import expf, logf, sequential_sum


class SigmoidCrossEntropyLossLayer(LossLayer):
    """-sum(t log s(x) + (1 - t) log(1 - s(x))) / normalizer (BATCH_SIZE by default, as in Caffe)."""

    type = "SigmoidCrossEntropyLoss"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads ignore_label and the normalization."""
        super().layer_setup(bottom, top)
        self.ignore = self.ignore_label()
        self.mode = normalization_mode(self.layer_param.loss_param, NORM.BATCH_SIZE)
        self.norm = 1.0

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Inputs and targets must have the same count."""
        super().reshape(bottom, top)
        if bottom[0].count != bottom[1].count:
            raise self.error(f"inputs ({bottom[0].shape}) and targets ({bottom[1].shape}) must have the "
                             "same count")
        self.outer = bottom[0].shape[0] if bottom[0].num_axes else 1
        self.inner = bottom[0].count_between(1) if bottom[0].num_axes else 1

    def _valid(self, side: Side, target: Array) -> Array:
        if self.ignore is None:
            return side.xp.ones(target.shape, dtype=bool)
        return target.astype(side.xp.int64) != self.ignore

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """loss_i = -(x (t - [x >= 0]) - log(1 + exp(x - 2 x [x >= 0]))), which never overflows."""
        xp = side.xp
        x = bottom[0].data_on(side)
        t = bottom[1].data_on(side)
        positive = (x >= 0).astype(x.dtype)
        terms = x * (t - positive) - logf(xp, 1 + expf(xp, x - 2 * x * positive))
        valid = self._valid(side, t)
        count = int(valid.sum()) if self.ignore is not None else -1
        self.norm = normalizer(self.mode, self.outer, self.inner, count)
        loss = -sequential_sum(xp, terms[valid])
        top[0].mutable_data_on(side)[...] = loss / xp.float32(self.norm)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (sigmoid(x) - t) * loss_weight / normalizer, zero where the target is ignored."""
        self.refuse_label_backward(propagate_down, what="target")
        if not propagate_down[0]:
            return
        xp = side.xp
        x = bottom[0].data_on(side)
        t = bottom[1].data_on(side)
        scale = top[0].diff_on(side).reshape(()) / xp.float32(self.norm)
        grad = xp.where(self._valid(side, t), sigmoid(xp, x) - t, xp.float32(0)) * scale
        bottom[0].mutable_diff_on(side)[...] = grad
