"""Normalize[happynear]: NormFace's and AM-Softmax's L2 (or L1) normalisation across channels.

Not SSD's Normalize (caffe-layers-ssd, block norm_param): this one reads normalize_param, has no scale
blob and may give the norm as a second top.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block, has_extra_field, has_param_block, param_blocks

F32 = np.float32
TYPES = ("L2", "L1")
# The fork's epsilons: its CPU code adds 1e-6 to the sum of squares (or of magnitudes); its GPU code adds
# 1e-12 to the sum of squares (L2) and 1e-6 to the sum of magnitudes (L1).
CPU_EPS = F32(1e-6)
GPU_L2_EPS = F32(1e-12)
# Types only happynear's forks define: a net holding one of them comes from those forks.
HAPPYNEAR_ONLY_TYPES = frozenset({"Flip", "LabelSpecificAdd", "ChannelScale", "LabelSpecificRescale",
                                  "InnerDistance", "GeneralContrastiveLoss", "GeneralTripletLoss",
                                  "GlobalLSEMargin", "SoftTruncation"})


def is_happynear_layer(layer: caffe_pb2.LayerParameter) -> bool:
    """Whether a layer is of a type, or carries a block or field, that only happynear's forks define."""
    if layer.type in HAPPYNEAR_ONLY_TYPES or has_param_block(layer, "normalize_param"):
        return True
    return layer.type == "InnerProduct" and has_extra_field(layer.inner_product_param, "normalize")


class HappynearNormalizeLayer(Layer):
    """y = x / ||x|| over the channels at each (n, h, w): sqrt(sum x^2 + eps) (L2) or sum |x| + eps (L1)."""

    type = "Normalize"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1
    max_top_blobs = 2
    # The fork reads num/channels/height/width (Caffe's legacy accessors: at most 4 axes, missing ones 1).
    bottom_num_axes = {0: (0, 4)}

    @classmethod
    def accepts_in_net(cls, param: caffe_pb2.LayerParameter,
                       net: Sequence[caffe_pb2.LayerParameter]) -> bool | None:
        """a Normalize with normalize_param, or a blockless one in a net of happynear's forks."""
        if has_param_block(param, "normalize_param"):
            return True
        if "norm_param" in param_blocks() and has_param_block(param, "norm_param"):
            return False
        return any(is_happynear_layer(layer) for layer in net)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads normalize_param; bp_norm takes effect only with the norm top, as in the fork."""
        param = get_param_block(self.layer_param, "normalize_param")
        if param.normalize_type not in TYPES:
            raise self.error(f"normalize_param.normalize_type is '{param.normalize_type}'; the fork "
                             f"implements 'L2' and 'L1' only")
        self.normalize_type = param.normalize_type
        self.fix_gradient = bool(param.fix_gradient)
        self.bp_norm = bool(param.bp_norm) and len(top) == 2
        self._norm: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (N, C, H, W) from the legacy view (a 2-axis bottom gives a 4-axis top, as the fork's Reshape
        does); the norm top (N, 1, H, W). In place works, as in the fork (backward reads only y and the norm,
        and sign(x) = sign(y))."""
        x = bottom[0]
        top[0].reshape((x.num, x.channels, x.height, x.width))
        if len(top) == 2:
            top[1].reshape((x.num, 1, x.height, x.width))

    def _eps(self, side: Side) -> np.float32:
        return GPU_L2_EPS if side.name == "gpu" and self.normalize_type == "L2" else CPU_EPS

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The norm over the channels, then the bottom divided by it."""
        xp = side.xp
        x = bottom[0].data_on(side).reshape(bottom[0].num, bottom[0].channels, -1)
        if self.normalize_type == "L2":
            norm = xp.sqrt((x * x).sum(axis=1, keepdims=True) + self._eps(side))
        else:
            norm = xp.abs(x).sum(axis=1, keepdims=True) + self._eps(side)
        top[0].mutable_data_on(side).reshape(x.shape)[...] = x / norm
        if len(top) == 2:
            top[1].mutable_data_on(side).reshape(norm.shape)[...] = norm
        self._norm = norm if self.backward_needed and len(top) == 1 else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (dy - s <y, dy>) / ||x||, s = y (L2) or sign(x) (L1); with bp_norm, + d||x|| s.

        On the GPU side the fork skips the division with fix_gradient; its CPU code ignores the field.
        """
        if not propagate_down[0]:
            return
        xp = side.xp
        shape = (bottom[0].num, bottom[0].channels, -1)
        y = top[0].data_on(side).reshape(shape)
        dy = top[0].diff_on(side).reshape(shape)
        if len(top) == 2:
            norm = top[1].data_on(side).reshape(bottom[0].num, 1, -1)
        elif self._norm is not None:
            norm = self._norm
        else:
            raise self.error("backward without a forward that kept the norm (the net marked the layer as "
                             "needing no backward)")
        direction = y if self.normalize_type == "L2" else xp.sign(bottom[0].data_on(side).reshape(shape))
        dx = bottom[0].mutable_diff_on(side).reshape(shape)
        dx[...] = dy - direction * (y * dy).sum(axis=1, keepdims=True)
        if not (self.fix_gradient and side.name == "gpu"):
            dx /= norm
        if self.bp_norm:
            dx += top[1].diff_on(side).reshape(norm.shape) * direction
