"""LabelSpecificAdd: AM-Softmax's additive margin, y[n, label[n]] += bias (bias = -m) while training."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.layer_bases.loss import check_labels
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block

F32 = np.float32


class LabelSpecificAddLayer(Layer):
    """Adds `bias` to each sample's target-class score where that score exceeds -bias (TRAIN only); the
    bias may be annealed, bias_base + (1 + bias_gamma iteration)^bias_power - 1 clipped to [bias_min,
    bias_max], iteration counting forward passes. The gradient passes through unchanged."""

    type = "LabelSpecificAdd"
    min_bottom_blobs = 2
    min_top_blobs = 1
    max_top_blobs = 2

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads label_specific_add_param; the bias is annealed when bias_base is given."""
        param = get_param_block(self.layer_param, "label_specific_add_param")
        self.bias = F32(param.bias)
        self.anneal_bias = param.HasField("bias_base")
        self.bias_base = F32(param.bias_base)
        self.bias_gamma = F32(param.bias_gamma)
        self.bias_power = F32(param.bias_power)
        self.bias_min = F32(param.bias_min)
        self.bias_max = F32(param.bias_max)
        self.iteration = int(param.iteration)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top like the scores (in place allowed); the bias top (1,); one label per sample."""
        if bottom[1].count != bottom[0].num:
            raise self.error(f"bottom 1 (labels) has {bottom[1].count} values; expected one per sample of "
                             f"bottom 0 ({bottom[0].num}, shape {bottom[0].shape})")
        if top[0] is not bottom[0]:
            top[0].reshape_like(bottom[0])
        if len(top) == 2:
            top[1].reshape((1,))

    def current_bias(self) -> np.float32:
        """The bias of this pass: the fixed one, or the annealed one (advancing the iteration)."""
        if not self.anneal_bias:
            return self.bias
        ramp = np.power(F32(1) + self.bias_gamma * F32(self.iteration), self.bias_power)
        self.bias = F32(min(max(F32(self.bias_base + ramp - F32(1)), self.bias_min), self.bias_max))
        self.iteration += 1
        return self.bias

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the scores, then (TRAIN) adds the bias to the target scores above -bias.

        The fork's transform_test is and-ed with phase == TRAIN, so TEST never adds the bias whatever it says.
        """
        xp = side.xp
        if top[0] is not bottom[0]:
            top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)
        if self.phase == caffe_pb2.TEST:
            return
        num = bottom[0].num
        dim = bottom[0].count // num
        check_labels(self, bottom[1], dim, None)
        bias = self.current_bias()
        if len(top) == 2:
            top[1].mutable_data_on(side)[...] = bias
        scores = top[0].mutable_data_on(side).reshape(num, dim)
        rows = xp.arange(num)
        labels = bottom[1].data_on(side).reshape(num).astype(xp.int64)
        target = scores[rows, labels]
        scores[rows, labels] = xp.where(target > -bias, target + bias, target)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The bottom diff is the top diff (nothing to do in place)."""
        if propagate_down[0] and top[0] is not bottom[0]:
            bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side)
