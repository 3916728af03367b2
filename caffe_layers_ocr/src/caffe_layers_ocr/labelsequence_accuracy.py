"""LabelsequenceAccuracy (jolibrain/caffe, deepdetect's CRNN templates): the fraction of sequences whose
best path equals their label sequence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ocr.ctc import compact_labels


class LabelsequenceAccuracyLayer(Layer):
    """Scores (N, T, C), labels (N, L): exact best-path matches / N.

    The best path is each step's argmax (the first maximum), repeats merged and blank_label dropped; the
    target is the label row without its blanks (labels truncated to integers, as the fork stores them).
    """

    type = "LabelsequenceAccuracy"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 3, 1: 2}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads blank_label."""
        self.blank = int(get_param_block(self.layer_param, "labelsequence_accuracy_param").blank_label)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """A scalar top; the two bottoms share the batch size (the fork's CHECK)."""
        if bottom[0].shape[0] != bottom[1].shape[0]:
            raise self.error(f"the batch size should be equal: scores {bottom[0].shape}, labels "
                             f"{bottom[1].shape}")
        top[0].reshape(())

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The fraction of exact sequences."""
        xp = side.xp
        num, steps, _ = bottom[0].shape
        best = xp.argmax(bottom[0].data_on(side), axis=2)
        previous = xp.concatenate([xp.full((num, 1), self.blank, dtype=best.dtype), best[:, :-1]], axis=1)
        predicted, predicted_lengths = compact_labels(xp, best, (best != previous) & (best != self.blank))
        labels = bottom[1].data_on(side)
        target, target_lengths = compact_labels(xp, labels.astype(np.int64), labels != self.blank)
        width = max(steps, target.shape[1])
        padded_prediction = xp.zeros((num, width), dtype=np.int64)
        padded_prediction[:, :steps] = predicted
        padded_target = xp.zeros((num, width), dtype=np.int64)
        padded_target[:, :target.shape[1]] = target
        hits = (predicted_lengths == target_lengths) & (padded_prediction == padded_target).all(axis=1)
        top[0].mutable_data_on(side)[...] = hits.sum() / num
