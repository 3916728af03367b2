"""Dropout with SegNet's DropoutParameter.sample_weights_test: Monte-Carlo dropout (a new mask, scaled by
1 / (1 - p)) at TEST too when it is true; otherwise BVLC's Dropout."""

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


class SampleWeightsTestDropoutLayer(Layer):
    """SegNet's Dropout: y = x mask / (1 - p) in TRAIN, and in TEST when sample_weights_test; else y = x."""

    type = "Dropout"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers that set dropout_param.sample_weights_test (SegNet's Bayesian models)."""
        return param.HasField("dropout_param") and has_extra_field(param.dropout_param, "sample_weights_test")

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dropout_ratio (in [0, 1)) and sample_weights_test."""
        param = self.layer_param.dropout_param
        self.ratio = param.dropout_ratio
        if not 0.0 <= self.ratio < 1.0:
            raise self.error(f"dropout_param.dropout_ratio must be in [0, 1), got {self.ratio}")
        self.sampling = self.phase == caffe_pb2.TRAIN or get_extra_field(param, "sample_weights_test")
        self.scale = np.float32(1.0 / (1.0 - self.ratio))
        self.mask: Any = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Draws a new mask (as the std pack's Dropout draws it) when sampling; else copies."""
        x = bottom[0].data_on(side)
        if not self.sampling:
            top[0].mutable_data_on(side)[...] = x
            return
        keep = runtime.rng().bernoulli(bottom[0].shape, 1.0 - self.ratio)
        self.mask = side.xp.asarray(keep.astype(np.float32) * self.scale)
        top[0].mutable_data_on(side)[...] = x * self.mask

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy mask / (1 - p) when sampling, else dy."""
        if not propagate_down[0]:
            return
        dy = top[0].diff_on(side)
        bottom[0].mutable_diff_on(side)[...] = dy * self.mask if self.sampling else dy
