"""LossLayer: Caffe's base of loss layers (default loss weight, label checks, normalizer, kLOG_THRESHOLD)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2

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
    """What a loss is divided by under a normalization mode (LossLayer::GetNormalizer); at least 1."""
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


def read_labels(layer: Layer, side: Side, blob: Blob, num_classes: int,
                ignore: int | None) -> tuple[Array, Array]:
    """Integer labels (truncated, as Caffe casts; ignored ones set to 0) and the mask of non-ignored ones."""
    xp = side.xp
    check_labels(layer, blob, num_classes, ignore)
    labels = blob.data_on(side).astype(xp.int64)
    valid = labels != ignore if ignore is not None else xp.ones(labels.shape, dtype=bool)
    return xp.where(valid, labels, 0), valid


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
