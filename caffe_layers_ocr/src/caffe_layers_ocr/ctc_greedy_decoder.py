"""CTCGreedyDecoder (senlinuc/caffe_ocr): best-path decoding of (T, N, C) scores, or its accuracy
on labels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ocr.ctc import compact_labels


class CTCGreedyDecoderLayer(Layer):
    """Per sequence: the argmax class of each step, repeats merged (ctc_merge_repeated), blanks dropped.

    One bottom (scores T x N x C): top (N, T, 1, 1), each row the decoded labels then -1.
    Two bottoms (scores, labels N x L): top (1, 2, 1, 1), [1 - mean normalised edit distance, the fraction
    of sequences decoded exactly], as the fork's TEST-phase accuracy.
    """

    type = "CTCGreedyDecoder"
    min_bottom_blobs = 1
    max_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (3, 32)}
    param_block = "ctc_decoder_param"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads blank_index (negative: the last class) and ctc_merge_repeated."""
        param = get_param_block(self.layer_param, "ctc_decoder_param")
        self.blank_param = int(param.blank_index)
        self.merge_repeated = bool(param.ctc_merge_repeated)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (N, T, 1, 1) for sequences, (1, 2, 1, 1) for the accuracy."""
        self.steps, self.num, self.classes = bottom[0].shape[:3]
        self.blank = self.blank_param if self.blank_param >= 0 else self.classes - 1
        if len(bottom) == 2:
            if bottom[1].num_axes < 1 or bottom[1].shape[0] != self.num:
                raise self.error(f"the label bottom '{self.layer_param.bottom[1]}' (shape {bottom[1].shape}) "
                                 f"should be N x L with N = {self.num}, the scores' second dimension")
            top[0].reshape((1, 2, 1, 1))
        else:
            top[0].reshape((self.num, self.steps, 1, 1))

    def decode(self, xp: ArrayModule, scores: Array) -> tuple[Array, Array]:
        """The decoded labels of each sequence at the front of an (N, T) row, and their number."""
        best = xp.argmax(scores.reshape(self.steps, self.num, -1)[:, :, :self.classes], axis=2).T  # (N, T)
        previous = xp.concatenate([xp.full((self.num, 1), -1, dtype=best.dtype), best[:, :-1]], axis=1)
        keep = best != self.blank
        if self.merge_repeated:
            keep &= best != previous
        return compact_labels(xp, best, keep)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Decoded sequences (padded with -1), or the edit-distance and line accuracies."""
        xp = side.xp
        decoded, lengths = self.decode(xp, bottom[0].data_on(side))
        if len(bottom) == 1:
            filled = xp.arange(self.steps)[None, :] < lengths[:, None]
            sequences = xp.where(filled, decoded, -1)
            top[0].mutable_data_on(side)[...] = sequences.reshape(self.num, self.steps, 1, 1)
            return
        top[0].mutable_data_on(side)[...] = self.accuracy(xp, decoded, lengths, bottom[1].data_on(side))

    def accuracy(self, xp: ArrayModule, decoded: Array, lengths: Array, label_data: Array) -> Array:
        """[1 - sum(edit distance / longer length) / N, exact sequences / N] (empty pairs: neither)."""
        raw = label_data.reshape(self.num, -1)
        # A negative label ends the target; labels are rounded (0.5 + x, truncated) and blanks left out.
        ended = xp.cumsum(raw < 0, axis=1) > 0
        target = (raw + 0.5).astype(np.int64)
        target, target_lengths = compact_labels(xp, target, ~ended & (target != self.blank))
        distance = edit_distance(xp, target, target_lengths, decoded, lengths)
        longer = xp.maximum(target_lengths, lengths)
        counted = longer > 0
        ratio = xp.where(counted, distance / xp.maximum(longer, 1), 0.0)
        edit_accuracy = 1.0 - ratio.sum() / self.num
        line_accuracy = (counted & (distance == 0)).sum() / self.num
        return xp.stack([edit_accuracy, line_accuracy]).astype(np.float32).reshape(1, 2, 1, 1)


def edit_distance(xp: ArrayModule, first: Array, first_lengths: Array, second: Array,
                  second_lengths: Array) -> Array:
    """Levenshtein distances of first[n, :first_lengths[n]] and second[n, :second_lengths[n]], per row n.

    The dynamic programme over positions runs for the whole batch at once; a padded row's extra positions
    only touch cells past its own lengths, which are never read.
    """
    num = first.shape[0]
    rows = xp.arange(num)
    previous = xp.broadcast_to(xp.arange(second.shape[1] + 1)[None, :], (num, second.shape[1] + 1)).copy()
    at_lengths = xp.where(first_lengths == 0, previous[rows, second_lengths], 0)
    for i in range(1, first.shape[1] + 1):
        current = xp.zeros_like(previous)
        current[:, 0] = i
        substitute = previous[:, :-1] + (first[:, i - 1:i] != second).astype(previous.dtype)
        for j in range(1, second.shape[1] + 1):
            current[:, j] = xp.minimum(xp.minimum(previous[:, j] + 1, current[:, j - 1] + 1),
                                       substitute[:, j - 1])
        at_lengths = xp.where(first_lengths == i, current[rows, second_lengths], at_lengths)
        previous = current
    return at_lengths
