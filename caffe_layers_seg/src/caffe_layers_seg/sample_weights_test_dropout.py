"""Dropout with SegNet's DropoutParameter.sample_weights_test: Monte-Carlo dropout (a new mask, scaled by
1 / (1 - p)) at TEST too when it is true; otherwise BVLC's Dropout."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer_bases.dropout import DropoutLayerBase
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field, has_extra_field


class SampleWeightsTestDropoutLayer(DropoutLayerBase):
    """SegNet's Dropout: y = x mask / (1 - p) in TRAIN, and in TEST when sample_weights_test; else y = x."""

    type = "Dropout"

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers that set dropout_param.sample_weights_test (SegNet's Bayesian models)."""
        return param.HasField("dropout_param") and has_extra_field(param.dropout_param, "sample_weights_test")

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dropout_ratio (in [0, 1)) and sample_weights_test."""
        super().layer_setup(bottom, top)
        self.sampling = self.phase == caffe_pb2.TRAIN or get_extra_field(self.layer_param.dropout_param,
                                                                         "sample_weights_test")

    def masking(self) -> bool:
        """Whether forward draws a mask: in TRAIN, and in TEST with sample_weights_test."""
        return self.sampling
