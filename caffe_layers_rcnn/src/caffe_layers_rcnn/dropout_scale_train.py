"""Dropout with caffe-fast-rcnn's DropoutParameter.scale_train: scale at TRAIN (BVLC) or at TEST instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field, has_extra_field


class ScaleTrainDropoutLayer(Layer):
    """caffe-fast-rcnn's Dropout: TRAIN x mask (/ (1 - p) if scale_train); TEST x (* (1 - p) if not)."""

    type = "Dropout"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers that set dropout_param.scale_train (caffe-fast-rcnn)."""
        return param.HasField("dropout_param") and has_extra_field(param.dropout_param, "scale_train")

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dropout_ratio (in [0, 1)) and scale_train."""
        param = self.layer_param.dropout_param
        self.ratio = param.dropout_ratio
        if not 0.0 <= self.ratio < 1.0:
            raise self.error(f"dropout_param.dropout_ratio must be in [0, 1), got {self.ratio}")
        self.scale_train = get_extra_field(param, "scale_train")
        # The fork's float scale_ = 1 / (1 - p), and TEST's factor 1 / scale_ (from double, stored as float).
        self.scale = np.float32(1.0 / (1.0 - self.ratio))
        self.test_factor = np.float32(1.0 / float(self.scale))
        self.mask: Any = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def _factor(self) -> Any:
        """What multiplies x (forward) and dy (backward): mask [* scale] in TRAIN, 1 or (1 - p) in TEST."""
        if self.phase == caffe_pb2.TRAIN:
            return self.mask
        return None if self.scale_train else self.test_factor

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Draws a new mask in TRAIN (as the std pack's Dropout draws it) and applies the factor."""
        if self.phase == caffe_pb2.TRAIN:
            # The same draw as Caffe's Dropout: caffe_rng_bernoulli(1. - p).
            keep = runtime.rng().bernoulli(bottom[0].shape, 1.0 - self.ratio)
            mask = keep.astype(np.float32)
            if self.scale_train:
                mask *= self.scale
            self.mask = side.xp.asarray(mask)
        factor = self._factor()
        x = bottom[0].data_on(side)
        top[0].mutable_data_on(side)[...] = x if factor is None else x * factor

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy times forward's factor."""
        if not propagate_down[0]:
            return
        factor = self._factor()
        dy = top[0].diff_on(side)
        bottom[0].mutable_diff_on(side)[...] = dy if factor is None else dy * factor
