"""CtcLoss (jolibrain/caffe, deepdetect's CRNN templates): warp-ctc's CTC loss over (T, N, C) activations."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ocr.ctc import compact_labels, ctc_cost_and_grad


class CtcLossLayer(LossLayer):
    """loss = sum of the sequences' CTC costs / N; the gradient, as the fork's, is that of the sum.

    Bottoms: activations (T, N, C) (unnormalised: the softmax is taken inside), labels (N, L) with the
    blank label as padding (every blank is left out). Each sequence uses the first time_step steps.
    """

    type = "CtcLoss"
    bottom_num_axes = {0: 3}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads alphabet_size and time_step (both more than 0, as the fork CHECKs) and blank_label."""
        super().layer_setup(bottom, top)
        param = get_param_block(self.layer_param, "ctc_loss_param")
        self.alphabet_size = int(param.alphabet_size)
        self.time_step = int(param.time_step)
        self.blank = int(param.blank_label)
        if self.alphabet_size <= 0:
            raise self.error("ctc_loss_param.alphabet_size (the number of classes, blank included) should be "
                             "greater than 0")
        if self.time_step <= 0:
            raise self.error("ctc_loss_param.time_step should be greater than 0")
        self._grad: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Labels: one row per sequence; the activations' classes are alphabet_size, steps >= time_step."""
        steps, num, classes = bottom[0].shape
        if bottom[1].num_axes < 1 or bottom[1].shape[0] != num:
            raise self.error(f"the label bottom '{self.layer_param.bottom[1]}' (shape {bottom[1].shape}) "
                             f"should have the batch size {num} (the activations' second axis) first")
        if classes != self.alphabet_size:
            raise self.error(f"the activations (shape {bottom[0].shape}) should have alphabet_size "
                             f"({self.alphabet_size}) classes along their third axis")
        if steps < self.time_step:
            raise self.error(f"the activations (shape {bottom[0].shape}) have fewer steps than "
                             f"ctc_loss_param.time_step ({self.time_step})")
        top[0].reshape(())

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Costs by warp-ctc's algorithm; their sum / N to the top; the gradient kept for backward."""
        xp = side.xp
        num = bottom[0].shape[1]
        labels = bottom[1].data_on(side).reshape(num, -1).astype(np.int64)
        if bool(((labels < 0) | (labels >= self.alphabet_size)).any()):
            raise self.error(f"a label of bottom '{self.layer_param.bottom[1]}' is outside [0, "
                             f"{self.alphabet_size}) (alphabet_size)")
        labels, lengths = compact_labels(xp, labels, labels != self.blank)
        if not bool((lengths > 0).any()):
            raise self.error("every label sequence is empty (all blank): the total label length should be "
                             "greater than 0")
        steps = xp.full((num,), self.time_step, dtype=np.int64)
        costs, grad = ctc_cost_and_grad(xp, bottom[0].data_on(side), labels, lengths, steps, self.blank)
        top[0].mutable_data_on(side)[...] = costs.sum() / num
        self._grad = grad.astype(np.float32) if self.backward_needed else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = top.diff x the summed costs' gradient (warp-ctc's, not divided by N, as the fork)."""
        self.refuse_label_backward(propagate_down)
        if not propagate_down[0]:
            return
        if self._grad is None:
            raise self.error("backward without a forward that kept the gradient")
        bottom[0].mutable_diff_on(side)[...] = self._grad * top[0].diff_on(side)
