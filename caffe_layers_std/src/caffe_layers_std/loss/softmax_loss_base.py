"""LossLayer: Caffe's base of loss layers (default loss weight, label checks, normalization)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_std.axes import canonical_axis, split_at
from caffe_layers_std.common.softmax import softmax

NORM = caffe_pb2.LossParameter
# Caffe's kLOG_THRESHOLD: probabilities are clamped to it before taking their log.
LOG_THRESHOLD = 1e-20


def normalization_mode(loss_param: caffe_pb2.LossParameter, default: int) -> int:
    """The loss's normalization: `normalization` if given, else the deprecated `normalize`, else default."""
    if loss_param.HasField("normalization"):
        return loss_param.normalization
    if loss_param.HasField("normalize"):
        return NORM.VALID if loss_param.normalize else NORM.BATCH_SIZE
    return default


def normalizer(mode: int, outer: int, inner: int, valid_count: int = -1) -> float:
    """What a loss is divided by under a normalization mode; at least 1 (so an all-ignored batch gives 0)."""
    if mode == NORM.FULL:
        value = outer * inner
    elif mode == NORM.VALID:
        value = outer * inner if valid_count == -1 else valid_count
    elif mode == NORM.BATCH_SIZE:
        value = outer
    elif mode == NORM.NONE:
        value = 1
    else:
        raise ValueError(f"unknown loss_param.normalization mode {mode}")
    return max(1.0, float(value))


def split_predictions(layer: Layer, data: Blob, labels: Blob, axis: int, field: str) -> tuple[int, int, int]:
    """(outer, classes, inner) of the data split at `axis` (named `field`); one label per prediction."""
    axis = canonical_axis(layer, data, axis, field)
    outer, classes, inner = split_at(data, axis)
    if outer * inner != labels.count:
        raise layer.error(f"number of labels ({labels.count}, shape {labels.shape}) must match the number "
                          f"of predictions ({outer * inner}): with {field} {axis} and data shape "
                          f"{data.shape} it must be the product of the other axes")
    return outer, classes, inner


def read_labels(layer: Layer, side: Side, blob: Blob, num_classes: int,
                ignore: int | None) -> tuple[Any, Any]:
    """Integer labels (truncated, as Caffe casts; ignored ones set to 0) and the mask of non-ignored ones."""
    xp = side.xp
    check_labels(layer, blob, num_classes, ignore)
    labels = blob.data_on(side).astype(xp.int64)
    valid = labels != ignore if ignore is not None else xp.ones(labels.shape, dtype=bool)
    return xp.where(valid, labels, 0), valid


def check_labels(layer: Layer, blob: Blob, num_classes: int, ignore: int | None) -> None:
    """Refuses labels outside [0, num_classes) that are not ignored.

    Checked on the host copy when it is current (labels from a data layer are), so that GPU mode waits on
    no device-to-host copy for it.
    """
    labels = (blob.cpu_data() if blob.host_data_current() else blob.gpu_data()).astype(np.int64)
    bad = (labels < 0) | (labels >= num_classes)
    if ignore is not None:
        bad &= labels != ignore
    if labels.size and bool(bad.any()):
        raise layer.error(f"a label is outside [0, {num_classes}) (the number of classes)"
                          + (f" and is not the ignore_label {ignore}" if ignore is not None else ""))


class LossLayer(Layer):
    """Two bottoms (prediction, label) to a scalar loss; the loss top defaults to loss_weight 1."""

    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    auto_top_blobs = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Adds loss_weight 1 on the loss top when none is given (and 0 on a second, output-only top)."""
        weights = self.layer_param.loss_weight
        if not weights:
            weights.append(1.0)
            if len(top) == 2:
                weights.append(0.0)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks that data and label share their first dimension; the loss top is 0-d."""
        if bottom[0].shape[:1] != bottom[1].shape[:1]:
            raise self.error(f"the data (shape {bottom[0].shape}) and label (shape {bottom[1].shape}) "
                             "should have the same first dimension")
        top[0].reshape(())

    def allow_force_backward(self, bottom_index: int) -> bool:
        """force_backward never reaches the label bottom."""
        return bottom_index != 1

    def refuse_label_backward(self, propagate_down: Sequence[bool], index: int = 1,
                              what: str = "label") -> None:
        """Raises when asked for a gradient w.r.t. a bottom a loss cannot differentiate (labels...)."""
        if len(propagate_down) > index and propagate_down[index]:
            raise self.error(f"cannot back-propagate to its {what} bottom (bottom {index}); set "
                             f"propagate_down: false for it (or drop force_backward)")

    def ignore_label(self) -> int | None:
        """loss_param.ignore_label if given, else None."""
        loss_param = self.layer_param.loss_param
        return loss_param.ignore_label if loss_param.HasField("ignore_label") else None


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

    def forward_softmax(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> Any:
        """Computes the softmax (the second top shares it) and returns it as (outer, classes, inner)."""
        split = (self.outer, self.classes, self.inner)
        prob = self.prob.mutable_data_on(side).reshape(split)
        prob[...] = softmax(side.xp, bottom[0].data_on(side).reshape(split))
        if len(top) > 1:
            top[1].share_data(self.prob)
        return prob

    def write_logit_diff(self, side: Side, bottom: Sequence[Blob], grad: Any) -> None:
        """Writes the loss's gradient w.r.t. the logits into bottom 0's diff (the prob top's is ignored)."""
        bottom[0].mutable_diff_on(side).reshape(self.outer, self.classes, self.inner)[...] = grad
