"""Dropout with caffe-fast-rcnn's DropoutParameter.scale_train: scale at TRAIN (BVLC) or at TEST instead."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.layer_bases.dropout import DropoutLayerBase
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field, has_extra_field


class ScaleTrainDropoutLayer(DropoutLayerBase):
    """caffe-fast-rcnn's Dropout: TRAIN x mask (/ (1 - p) if scale_train); TEST x (* (1 - p) if not)."""

    type = "Dropout"

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers that set dropout_param.scale_train (caffe-fast-rcnn)."""
        return param.HasField("dropout_param") and has_extra_field(param.dropout_param, "scale_train")

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dropout_ratio (in [0, 1)) and scale_train."""
        super().layer_setup(bottom, top)
        self.scale_train = get_extra_field(self.layer_param.dropout_param, "scale_train")
        self.scale_mask = self.scale_train
        # TEST's factor is the fork's 1 / scale_ (from double, stored as float).
        self.test_factor = np.float32(1.0 / float(self.scale))

    def unmasked(self, values: Array) -> Array:
        """TEST: x (and dy) as they are with scale_train, else times 1 - p."""
        return values if self.scale_train else values * self.test_factor
