"""InnerProduct[happynear]: AM-Softmax's classifier, an InnerProduct with `normalize: true` that rescales each
weight row to unit L2 norm (in the weight blob itself) before every forward."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field, has_extra_field
from caffe_layers_std.common.inner_product import InnerProductLayer

F32 = np.float32
# The fork's epsilons on the squared row norm: 1e-6 in its CPU code, 1e-12 in its GPU code.
CPU_EPS = F32(1e-6)
GPU_EPS = F32(1e-12)


class NormalizedInnerProductLayer(InnerProductLayer):
    """W[n] <- W[n] / sqrt(|W[n]|^2 + eps) in place, then y = x W^T (+ b); backward is BVLC's (the gradient
    of the normalised weights, not through the normalisation), as in the fork."""

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool | None:
        """an InnerProduct whose inner_product_param says normalize: true (happynear's field 7)."""
        return has_extra_field(param.inner_product_param, "normalize") and \
            bool(get_extra_field(param.inner_product_param, "normalize"))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises the weight's rows in the blob, then BVLC's forward.

        The fork's rows are the weight's first N runs of K values whatever `transpose` says (with transpose
        they are not the weight's columns); the same here.
        """
        xp = side.xp
        weight = self.blobs[0].mutable_data_on(side).reshape(self.num_output, self.k)
        eps = GPU_EPS if side.name == "gpu" else CPU_EPS
        weight *= F32(1) / xp.sqrt((weight * weight).sum(axis=1, keepdims=True) + eps)
        super().forward_on(side, bottom, top)
