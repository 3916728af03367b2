"""DropoutLayerBase: Caffe's Dropout, its ratio, its mask drawn on Caffe's stream, and its backward."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core import runtime
from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.proto import caffe_pb2


class DropoutLayerBase(NeuronLayer):
    """y = x * mask (each kept with probability 1 - p, scaled by 1 / (1 - p)) when masking, else y = x.

    As BVLC's Dropout it masks in TRAIN only; a fork's variant overrides `masking` (when a mask is drawn),
    sets `scale_mask` (whether the mask carries 1 / (1 - p)) or overrides `unmasked` (y when not masking).
    """

    scale_mask = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads and checks dropout_param.dropout_ratio; the scale is Caffe's float 1 / (1 - p)."""
        self.ratio = self.layer_param.dropout_param.dropout_ratio
        if not 0.0 <= self.ratio < 1.0:
            raise self.error(f"dropout_param.dropout_ratio must be in [0, 1), got {self.ratio}")
        self.scale = np.float32(1.0 / (1.0 - self.ratio))
        self.mask: Array | None = None

    def masking(self) -> bool:
        """Whether forward draws a mask: in TRAIN."""
        return self.phase == caffe_pb2.TRAIN

    def unmasked(self, values: Array) -> Array:
        """What forward gives for x, and backward for dy, when not masking: the values themselves."""
        return values

    def draw_mask(self, side: Side, shape: tuple[int, ...]) -> None:
        """A new mask on Caffe's stream (caffe_rng_bernoulli(1 - p)), scaled if scale_mask, on the side."""
        keep = runtime.rng().bernoulli(shape, 1.0 - self.ratio)
        mask = keep.astype(np.float32)
        if self.scale_mask:
            mask *= self.scale
        self.mask = side.xp.asarray(mask)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Masking: draws a new mask, y = x * mask; otherwise y = unmasked(x)."""
        x = bottom[0].data_on(side)
        if not self.masking():
            top[0].mutable_data_on(side)[...] = self.unmasked(x)
            return
        self.draw_mask(side, bottom[0].shape)
        assert self.mask is not None
        top[0].mutable_data_on(side)[...] = x * self.mask

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy * mask when masking, else unmasked(dy)."""
        if not propagate_down[0]:
            return
        dy = top[0].diff_on(side)
        if not self.masking():
            bottom[0].mutable_diff_on(side)[...] = self.unmasked(dy)
            return
        assert self.mask is not None, "backward before forward drew the mask"
        bottom[0].mutable_diff_on(side)[...] = dy * self.mask
