"""Dropout: in TRAIN zeroes each input with probability p and scales the rest by 1/(1-p); identity in TEST."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_layers_std.neuron.base import NeuronLayer


class DropoutLayer(NeuronLayer):
    """Caffe's (inverted) dropout; the mask is drawn from Caffe's stream (caffe_core.runtime.rng())."""

    type = "Dropout"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads and checks dropout_ratio."""
        self.ratio = self.layer_param.dropout_param.dropout_ratio
        if not 0.0 <= self.ratio < 1.0:
            raise self.error(f"dropout_param.dropout_ratio must be in [0, 1), got {self.ratio}")
        self.scale = np.float32(1.0 / (1.0 - self.ratio))
        self.mask = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """TRAIN: y = x * mask / (1 - p); TEST: y = x."""
        x = bottom[0].data_on(side)
        if self.phase != caffe_pb2.TRAIN:
            top[0].mutable_data_on(side)[...] = x
            return
        keep = runtime.rng().bernoulli(bottom[0].shape, 1.0 - self.ratio)  # caffe_rng_bernoulli(1. - p)
        self.mask = side.xp.asarray(keep.astype(np.float32) * self.scale)
        top[0].mutable_data_on(side)[...] = x * self.mask

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy * mask / (1 - p) in TRAIN, dy in TEST."""
        if not propagate_down[0]:
            return
        dy = top[0].diff_on(side)
        if self.phase == caffe_pb2.TRAIN:
            bottom[0].mutable_diff_on(side)[...] = dy * self.mask
        else:
            bottom[0].mutable_diff_on(side)[...] = dy
