"""WarpCTCLoss (senlinuc/caffe_ocr): warp-ctc's CTC loss over (T, N, C) activations, with blank_index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ocr.ctc import compact_labels, ctc_cost_and_grad


class WarpCTCLossLayer(LossLayer):
    """loss = mean CTC cost over the sequences whose cost is finite; the gradient is the summed costs'.

    Activations (T, N, C) or (T, N, C, 1), unnormalised. The labels come in one of three ways:
    - two bottoms: labels (N, L), every label equal to blank_index left out, every sequence T steps;
    - three bottoms: sequence indicators (T, N) (a 0 after step 0 ends the sequence) and labels (T, N)
      (a negative value ends them; 1 is added to each when blank_index is 0);
    - four bottoms: sequence lengths (N), label lengths (N), labels (L, N).
    """

    type = "WarpCTCLoss"
    min_bottom_blobs = 2
    max_bottom_blobs = 4
    exact_num_bottom_blobs = -1
    bottom_num_axes = {0: (3, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads blank_index (0 or more: the fork hands it to warp-ctc unchanged)."""
        super().layer_setup(bottom, top)
        self.blank = int(get_param_block(self.layer_param, "warp_ctc_loss_param").blank_index)
        if self.blank < 0:
            raise self.error(f"warp_ctc_loss_param.blank_index must be 0 or more (the fork passes it to "
                             f"warp-ctc as the blank's class), got {self.blank}")
        self._grad: Array | None = None

    def allow_force_backward(self, bottom_index: int) -> bool:
        """force_backward reaches the activations only (the fork's CHECKs refuse the other bottoms)."""
        return bottom_index == 0

    def _bottom_name(self, index: int) -> str:
        return self.layer_param.bottom[index]

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the other bottoms against T and N, as the fork's LayerSetUp does."""
        shape = bottom[0].shape
        if len(shape) == 4 and shape[3] != 1:
            raise self.error(f"the activations (shape {shape}) should be T x N x C (x 1)")
        steps, num, classes = shape[:3]
        if not 0 <= self.blank < classes:
            raise self.error(f"warp_ctc_loss_param.blank_index {self.blank} is not a class of the "
                             f"activations (C = {classes})")

        def check(index: int, ok: bool, expected: str) -> None:
            if not ok:
                raise self.error(f"bottom {index} '{self._bottom_name(index)}' (shape {bottom[index].shape}) "
                                 f"should be {expected} (T = {steps}, N = {num})")

        if len(bottom) == 2:
            check(1, bottom[1].num_axes >= 1 and bottom[1].shape[0] == num, "N x L")
        elif len(bottom) == 3:
            check(1, bottom[1].shape[:2] == (steps, num) and bottom[1].count == steps * num, "T x N")
            check(2, bottom[2].shape[:2] == (steps, num) and bottom[2].count == steps * num, "T x N")
        else:
            check(1, bottom[1].count == num, "N values")
            check(2, bottom[2].count == num, "N values")
            check(3, bottom[3].num_axes >= 2 and bottom[3].shape[1] == num, "L x N")
        top[0].reshape(())

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Costs by warp-ctc's algorithm; their mean over the finite ones to the top; the gradient kept."""
        xp = side.xp
        steps, num, classes = bottom[0].shape[:3]
        labels, label_lengths, input_lengths = self.read_sequences(side, bottom, steps, num)
        if bool(((labels < 0) | (labels >= classes)).any()):
            raise self.error(f"a label is outside [0, {classes}) (the activations' classes)")
        activations = bottom[0].data_on(side).reshape(steps, num, classes)
        costs, grad = ctc_cost_and_grad(xp, activations, labels, label_lengths, input_lengths, self.blank)
        finite = costs < np.inf
        counted = finite.sum()
        total = xp.where(finite, costs, 0.0).sum()
        top[0].mutable_data_on(side)[...] = xp.where(counted > 0, total / xp.maximum(counted, 1), np.nan)
        self._grad = grad.reshape(bottom[0].shape).astype(np.float32) if self.backward_needed else None

    def read_sequences(self, side: Side, bottom: Sequence[Blob], steps: int,
                       num: int) -> tuple[Array, Array, Array]:
        """Labels (N, L) (each row's labels at its front), label lengths and sequence lengths (N)."""
        xp = side.xp
        side_data = [b.data_on(side) for b in bottom]
        if len(bottom) == 2:
            raw = side_data[1].reshape(num, -1).astype(np.int64)
            labels, lengths = compact_labels(xp, raw, raw != self.blank)
            return labels, lengths, xp.full((num,), steps, dtype=np.int64)
        if len(bottom) == 4:
            input_lengths = side_data[1].reshape(num).astype(np.int64)
            label_lengths = side_data[2].reshape(num).astype(np.int64)
            width = bottom[3].shape[0]
            labels = side_data[3].reshape(width, num, -1)[:, :, 0].T.astype(np.int64)
            if bool(((input_lengths < 0) | (input_lengths > steps)).any()):
                raise self.error(f"a sequence length of bottom 1 '{self._bottom_name(1)}' is outside "
                                 f"[0, {steps}]")
            if bool(((label_lengths < 0) | (label_lengths > width)).any()):
                raise self.error(f"a label length of bottom 2 '{self._bottom_name(2)}' is outside "
                                 f"[0, {width}]")
            keep = xp.arange(width)[None, :] < label_lengths[:, None]
            return xp.where(keep, labels, 0), label_lengths, input_lengths
        indicators = (side_data[1].reshape(steps, num) + 0.5).astype(np.int64).T  # (N, T)
        raw = side_data[2].reshape(steps, num).T
        stops = indicators[:, 1:] == 0
        input_lengths = xp.where(stops.any(axis=1), xp.argmax(stops, axis=1) + 1, steps)
        ended = raw < 0
        label_lengths = xp.where(ended.any(axis=1), xp.argmax(ended, axis=1), steps)
        labels = (raw + 0.5).astype(np.int64) + (1 if self.blank == 0 else 0)
        empty = label_lengths == 0
        if bool((empty & (input_lengths > 1)).any()):
            raise self.error("a sequence without labels should be at most one step long (its indicators "
                             "0 then 0)")
        input_lengths = xp.where(empty, 0, input_lengths)
        if bool((label_lengths > input_lengths).any()):
            raise self.error("the label length must be smaller or equal to the sequence length")
        keep = xp.arange(steps)[None, :] < label_lengths[:, None]
        return xp.where(keep, labels, 0), label_lengths, input_lengths

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = top.diff x the summed costs' gradient (not divided by the count, as the fork)."""
        for index in range(1, len(bottom)):
            self.refuse_label_backward(propagate_down, index, "sequence or label")
        if not propagate_down[0]:
            return
        if self._grad is None:
            raise self.error("backward without a forward that kept the gradient")
        bottom[0].mutable_diff_on(side)[...] = self._grad * top[0].diff_on(side)
