"""Accuracy: the fraction of predictions with the true class among the top_k scores (ties count against)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.layer_bases.loss import read_labels
from caffe_layers_std.axes import split_predictions


class AccuracyLayer(Layer):
    """Top-k accuracy along accuracy_param.axis; an optional second top gives the accuracy per class."""

    type = "Accuracy"
    exact_num_bottom_blobs = 2
    min_top_blobs = 1
    max_top_blobs = 2

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads top_k and ignore_label."""
        param = self.layer_param.accuracy_param
        self.top_k = param.top_k
        self.ignore = param.ignore_label if param.HasField("ignore_label") else None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The accuracy is 0-d; the per-class top has one entry per class."""
        if bottom[1].count and self.top_k > bottom[0].count // bottom[1].count:
            raise self.error(f"accuracy_param.top_k ({self.top_k}) must be less than or equal to the number "
                             f"of classes ({bottom[0].count // bottom[1].count})")
        self.outer, self.classes, self.inner = split_predictions(
            self, bottom[0], bottom[1], self.layer_param.accuracy_param.axis, "accuracy_param.axis")
        top[0].reshape(())
        if len(top) > 1:
            top[1].reshape((self.classes,))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Correct when fewer than top_k other classes score at least the true class."""
        xp = side.xp
        scores = bottom[0].data_on(side).reshape(self.outer, self.classes, self.inner)
        safe, valid = read_labels(self, side, bottom[1], self.classes, self.ignore)
        safe = safe.reshape(self.outer, 1, self.inner)
        valid = valid.reshape(self.outer, 1, self.inner)
        true_score = xp.take_along_axis(scores, safe, axis=1)
        better = (scores >= true_score).sum(axis=1, keepdims=True) - 1
        correct = valid & (better < self.top_k)
        count = valid.sum().astype(xp.float32)
        hits = correct.sum().astype(xp.float32)
        # Caffe divides float counts in float, and reports 0 when every label is ignored.
        top[0].mutable_data_on(side)[...] = xp.where(count > 0, hits / xp.maximum(count, 1), 0)
        if len(top) > 1:
            flat = safe.reshape(-1)
            n = self.classes
            per_class = xp.bincount(flat, weights=valid.reshape(-1).astype(xp.float32),
                                    minlength=n).astype(xp.float32)
            per_hit = xp.bincount(flat, weights=correct.reshape(-1).astype(xp.float32),
                                  minlength=n).astype(xp.float32)
            safe_total = xp.where(per_class > 0, per_class, 1)
            top[1].mutable_data_on(side)[...] = xp.where(per_class > 0, per_hit / safe_total, 0)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Accuracy has no gradient; asking for one (e.g. by force_backward) is refused."""
        if any(propagate_down):
            raise self.error("cannot back-propagate (accuracy has no gradient); remove force_backward or "
                             "set propagate_down: false for its bottoms")
