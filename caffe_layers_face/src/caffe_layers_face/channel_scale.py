"""ChannelScale: AM-Softmax's feature-norm rescaling, y[n, c, s] = scale[n, s] x[n, c, s] (or one global
scale, a running mean of the scales, with global_scale)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block

F32 = np.float32
# The fork's running mean of the scales (global_scale, GPU side): s = 0.99 s + 0.01 mean|scale|.
MOMENTUM = 0.99


class ChannelScaleLayer(Layer):
    """Bottom 0 (N, C, H, W) times bottom 1 (N*H*W values) broadcast over the channels; the optional second
    top (global_scale only) gives the global scale."""

    type = "ChannelScale"
    exact_num_bottom_blobs = 2
    min_top_blobs = 1
    max_top_blobs = 2
    # The fork reads num/channels/height/width (Caffe's legacy accessors: at most 4 axes, missing ones 1).
    bottom_num_axes = {0: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads channel_scale_param; with global_scale, a (1,) blob holding -1 ("unset"), lr_mult 0."""
        param = get_param_block(self.layer_param, "channel_scale_param")
        self.do_forward = bool(param.do_forward)
        self.do_backward_feature = bool(param.do_backward_feature)
        self.do_backward_scale = bool(param.do_backward_scale)
        self.global_scale = bool(param.global_scale)
        self.max_global_scale = F32(param.max_global_scale)
        self.min_global_scale = F32(param.min_global_scale)
        if len(top) == 2 and not self.global_scale:
            raise self.error("a second top gives the global scale: it needs channel_scale_param.global_scale "
                             "(the fork leaves it unshaped otherwise)")
        if not self.global_scale:
            return
        if not self.blobs:
            self.blobs = [Blob((1,))]
            self.blobs[0].mutable_cpu_data()[...] = -1
        if len(self.blobs) != 1 or self.blobs[0].count != 1:
            raise self.error(f"global_scale keeps one (1,) blob; got {[b.shape for b in self.blobs]}")
        if not self.layer_param.param:
            self.layer_param.param.add(lr_mult=0.0, decay_mult=0.0)
        elif self.layer_param.param[0].lr_mult != 0:
            raise self.error(f"param 0 has lr_mult {self.layer_param.param[0].lr_mult}; the global scale is "
                             f"a running statistic, not learned (use lr_mult: 0)")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top like bottom 0; bottom 1 must hold one scale per (n, h, w) of bottom 0."""
        x, scale = bottom
        if scale.num != x.num or x.count // x.channels != scale.count:
            raise self.error(f"bottom 1 (scales) has shape {scale.shape}; expected {x.num} samples and "
                             f"{x.count // x.channels} values in all (one per sample and position of "
                             f"bottom 0, "
                             f"shape {x.shape})")
        top[0].reshape_like(x)
        if len(top) == 2:
            top[1].reshape((1,))

    def _view(self, blob: Blob, array: Array) -> Array:
        return array.reshape(blob.num, blob.channels, -1)

    def _update_global_scale(self, side: Side, scale: Array) -> Array:
        """The fork's GPU code: in TRAIN, the mean |scale| (first pass) or a running mean of it; both sides
        clip to [min_global_scale, max_global_scale]. Its CPU code only clips (the blob's -1 gives the
        minimum)."""
        xp = side.xp
        stored = self.blobs[0].mutable_data_on(side)
        if side.name == "gpu" and self.phase == caffe_pb2.TRAIN:
            mean = xp.abs(scale).sum(dtype=xp.float32) / F32(scale.size)
            blended = (stored.astype(xp.float64) * MOMENTUM + mean.astype(xp.float64) * (1 - MOMENTUM))
            stored[...] = xp.where(stored < 0, mean, blended.astype(xp.float32))
            stored[...] = xp.maximum(xp.minimum(stored, self.max_global_scale), self.min_global_scale)
        elif side.name != "gpu":
            stored[...] = xp.maximum(xp.minimum(stored, self.max_global_scale), self.min_global_scale)
        return stored

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = scale x (do_forward), else a copy."""
        if not self.do_forward:
            top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)
            return
        x = bottom[0].data_on(side)
        scale = bottom[1].data_on(side)
        if self.global_scale:
            stored = self._update_global_scale(side, scale)
            if len(top) == 2:
                top[1].mutable_data_on(side)[...] = stored
            top[0].mutable_data_on(side)[...] = stored * x
            return
        out = self._view(top[0], top[0].mutable_data_on(side))
        out[...] = self._view(bottom[0], x) * scale.reshape(bottom[0].num, 1, -1)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = scale dy (do_backward_feature, else dy); dscale = sum_c x dy (do_backward_scale, else 0).

        As in the fork, backward uses bottom 1's scales even with global_scale, and gives the global scale
        no gradient.
        """
        x, scale = bottom
        dy = self._view(top[0], top[0].diff_on(side))
        if propagate_down[1]:
            dscale = bottom[1].mutable_diff_on(side).reshape(x.num, -1)
            if self.do_backward_scale:
                dscale[...] = (self._view(x, x.data_on(side)) * dy).sum(axis=1)
            else:
                dscale[...] = 0
        if propagate_down[0]:
            dx = self._view(x, x.mutable_diff_on(side))
            if self.do_backward_feature:
                dx[...] = dy * scale.data_on(side).reshape(x.num, 1, -1)
            else:
                dx[...] = dy
