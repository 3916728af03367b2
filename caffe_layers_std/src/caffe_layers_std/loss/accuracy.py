"""Accuracy: the fraction of predictions with the true class among the top_k scores (ties count against)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


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
        try:
            axis = bottom[0].canonical_axis_index(self.layer_param.accuracy_param.axis)
        except ValueError as err:
            raise self.error(f"accuracy_param.axis: {err}") from err
        if bottom[1].count and self.top_k > bottom[0].count // bottom[1].count:
            raise self.error(f"accuracy_param.top_k ({self.top_k}) must be less than or equal to the number "
                             f"of classes ({bottom[0].count // bottom[1].count})")
        self.outer = bottom[0].count_between(0, axis)
        self.classes = bottom[0].shape[axis]
        self.inner = bottom[0].count_between(axis + 1)
        if self.outer * self.inner != bottom[1].count:
            raise self.error(f"number of labels ({bottom[1].count}, shape {bottom[1].shape}) must match the "
                             f"number of predictions ({self.outer * self.inner}) for data shape "
                             f"{bottom[0].shape} and axis {axis}")
        top[0].reshape(())
        if len(top) > 1:
            top[1].reshape((self.classes,))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Correct when fewer than top_k other classes score at least the true class."""
        xp = side.xp
        scores = bottom[0].data_on(side).reshape(self.outer, self.classes, self.inner)
        labels = bottom[1].data_on(side).reshape(self.outer, 1, self.inner).astype(xp.int64)
        valid = labels != self.ignore if self.ignore is not None else xp.ones(labels.shape, dtype=bool)
        if labels.size and bool((valid & ((labels < 0) | (labels >= self.classes))).any()):
            raise self.error(f"a label is outside [0, {self.classes}) (the number of classes)")
        safe = xp.where(valid, labels, 0)
        true_score = xp.take_along_axis(scores, safe, axis=1)
        better = (scores >= true_score).sum(axis=1, keepdims=True) - 1
        correct = valid & (better < self.top_k)
        count = int(valid.sum())
        hits = correct.sum()
        top[0].mutable_data_on(side)[...] = hits / xp.float32(count) if count else 0
        if len(top) > 1:
            flat = safe.reshape(-1)
            n = self.classes
            per_class = xp.bincount(flat, weights=valid.reshape(-1).astype(xp.float32), minlength=n)
            per_hit = xp.bincount(flat, weights=correct.reshape(-1).astype(xp.float32), minlength=n)
            safe_total = xp.where(per_class > 0, per_class, 1)
            top[1].mutable_data_on(side)[...] = xp.where(per_class > 0, per_hit / safe_total, 0)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Accuracy has no gradient; asking for one (e.g. by force_backward) is refused."""
        if any(propagate_down):
            raise self.error("cannot back-propagate (accuracy has no gradient); remove force_backward or "
                             "set propagate_down: false for its bottoms")
