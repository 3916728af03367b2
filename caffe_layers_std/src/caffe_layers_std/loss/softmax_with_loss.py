"""SoftmaxWithLoss: softmax followed by the multinomial logistic loss, with ignore_label and normalization."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import NORM, normalization_mode, normalizer, read_labels
from caffe_layers_std.loss.softmax_loss_base import SoftmaxLossLayer
from caffe_layers_std.rounding import logf, sequential_sum

FLT_MIN = np.finfo(np.float32).tiny


class SoftmaxWithLossLayer(SoftmaxLossLayer):
    """-log softmax(x)[label] averaged per the normalization; an optional second top returns the softmax."""

    type = "SoftmaxWithLoss"
    param_block = "softmax_param"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads ignore_label and the normalization (deprecated `normalize` included)."""
        super().layer_setup(bottom, top)
        self.ignore = self.ignore_label()
        self.mode = normalization_mode(self.layer_param.loss_param, NORM.VALID)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Splits the data at softmax_param.axis and checks one label per prediction."""
        self.reshape_softmax(bottom, top, self.layer_param.softmax_param.axis, "softmax_param.axis")

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """loss = -sum log(max(p[label], FLT_MIN)) / normalizer over the non-ignored positions."""
        xp = side.xp
        prob = self.forward_softmax(side, bottom, top)
        labels, valid = read_labels(self, side, bottom[1], self.classes, self.ignore)
        labels = labels.reshape(self.outer, 1, self.inner)
        picked = xp.take_along_axis(prob, labels, axis=1).reshape(self.outer, self.inner)
        logs = logf(xp, xp.maximum(picked, xp.float32(FLT_MIN)))
        valid = valid.reshape(self.outer, self.inner)
        count = int(valid.sum()) if self.ignore is not None else -1
        loss = -sequential_sum(xp, logs[valid])
        norm = normalizer(self.mode, self.outer, self.inner, count)
        top[0].mutable_data_on(side)[...] = loss / xp.float32(norm)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (p - onehot(label)) * weight / normalizer, 0 where ignored (the prob top's diff unused)."""
        self.refuse_label_backward(propagate_down)
        if not propagate_down[0]:
            return
        xp = side.xp
        prob = self.prob.data_on(side).reshape(self.outer, self.classes, self.inner)
        labels, valid = read_labels(self, side, bottom[1], self.classes, self.ignore)
        labels = labels.reshape(self.outer, 1, self.inner)
        valid = valid.reshape(self.outer, 1, self.inner)
        onehot = xp.arange(self.classes).reshape(1, -1, 1) == labels
        count = int(valid.sum()) if self.ignore is not None else -1
        scale = top[0].diff_on(side).reshape(()) / xp.float32(
            normalizer(self.mode, self.outer, self.inner, count))
        grad = xp.where(valid, prob - onehot, xp.float32(0)) * scale
        self.write_logit_diff(side, bottom, grad)
