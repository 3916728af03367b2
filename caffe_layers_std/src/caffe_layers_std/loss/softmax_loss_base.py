"""SoftmaxLossLayer: the base of the losses on softmax(x) along an axis (SoftmaxWithLoss, InfogainLoss)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer
from caffe_layers_std.axes import split_predictions
from caffe_layers_std.common.softmax import softmax


class SoftmaxLossLayer(LossLayer):
    """A loss on softmax(x) along an axis; an optional second top returns the softmax (diff ignored)."""

    exact_num_top_blobs = -1
    min_top_blobs = 1
    max_top_blobs = 2
    backward_ignores_tops = (1,)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Adds the default loss weights and creates the softmax buffer."""
        super().layer_setup(bottom, top)
        self.prob = Blob()

    def reshape_softmax(self, bottom: Sequence[Blob], top: Sequence[Blob], axis: int, field: str) -> None:
        """Checks the bottoms, splits the data at `axis` into (outer, classes, inner), shapes the softmax."""
        super().reshape(bottom, top)
        self.outer, self.classes, self.inner = split_predictions(self, bottom[0], bottom[1], axis, field)
        self.prob.reshape_like(bottom[0])
        if len(top) > 1:
            top[1].reshape_like(bottom[0])

    def forward_softmax(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> Array:
        """Computes the softmax (the second top shares it) and returns it as (outer, classes, inner)."""
        split = (self.outer, self.classes, self.inner)
        prob = self.prob.mutable_data_on(side).reshape(split)
        prob[...] = softmax(side.xp, bottom[0].data_on(side).reshape(split))
        if len(top) > 1:
            top[1].share_data(self.prob)
        return prob

    def write_logit_diff(self, side: Side, bottom: Sequence[Blob], grad: Array) -> None:
        """Writes the loss's gradient w.r.t. the logits into bottom 0's diff (the prob top's is ignored)."""
        bottom[0].mutable_diff_on(side).reshape(self.outer, self.classes, self.inner)[...] = grad
