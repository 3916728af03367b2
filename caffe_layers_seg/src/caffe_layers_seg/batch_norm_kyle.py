"""BatchNormKyle of inisis: Caffe's BatchNorm (mean, variance and their scale factor) with an optional
per-channel alpha and beta applied after normalising (use_alpha_beta)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.batch_norm import BatchNormLayerBase
from caffe_core.schema_extensions import get_extra_field
from caffe_layers_seg.channel_ops import channel_view, per_channel, reduce_channels

F32 = np.float32


class BatchNormKyleLayer(BatchNormLayerBase):
    """y = (x - mean) / sqrt(var + eps) [* alpha + beta], batch or stored statistics as Caffe's BatchNorm."""

    type = "BatchNormKyle"
    param_block = "batch_norm_param"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads batch_norm_param (and use_alpha_beta); creates zeroed statistics, alpha 1 and beta 0."""
        self.read_batch_norm_param(bottom)
        self.use_alpha_beta = get_extra_field(self.layer_param.batch_norm_param, "use_alpha_beta")
        if not self.blobs:
            self.create_statistics()
            if self.use_alpha_beta:
                # inisis sets alpha to 1 and beta to 0; weight_filler and bias_filler are not used.
                self.blobs += [Blob((self.channels,)), Blob((self.channels,))]
                self.blobs[3].mutable_cpu_data()[...] = 1
                self.blobs[4].mutable_cpu_data()[...] = 0
        expected = 5 if self.use_alpha_beta else 3
        if len(self.blobs) != expected:
            raise self.error(f"expects {expected} blobs with batch_norm_param.use_alpha_beta "
                             f"{str(self.use_alpha_beta).lower()}, got {len(self.blobs)}")
        self.x_norm: Array | None = None
        self.std: Array | None = None

    def _alpha_beta(self, side: Side) -> tuple[Array, Array]:
        return (per_channel(self.blobs[3].data_on(side).reshape(-1)),
                per_channel(self.blobs[4].data_on(side).reshape(-1)))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises by stored (use_global_stats) or batch statistics, updating the moving averages."""
        xp = side.xp
        blob = bottom[0]
        num = blob.shape_at(0)
        x = channel_view(blob.data_on(side), num, self.channels)
        if self.use_global_stats:
            mean, variance = self.stored_statistics(side)
            centred = x + per_channel(-mean)
        else:
            spatial = 1.0 / (num * x.shape[2])
            mean = reduce_channels(x, spatial)
            centred = x + per_channel(-mean)
            variance = reduce_channels(centred * centred, spatial)
            self.update_running_statistics(side, mean, variance, blob.count // self.channels)
        self.std = per_channel(xp.power(variance + self.eps, F32(0.5)))
        self.x_norm = centred / self.std
        y = self.x_norm
        if self.use_alpha_beta:
            alpha, beta = self._alpha_beta(side)
            y = beta + alpha * y
        top[0].mutable_data_on(side)[...] = y.reshape(blob.shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (g - mean(g) - mean(g y) y) / std with g = dy [* alpha]; stored statistics: g / std only."""
        assert self.x_norm is not None and self.std is not None  # set by forward
        blob = bottom[0]
        num = blob.shape_at(0)
        dy = channel_view(top[0].diff_on(side), num, self.channels)
        g = dy * self._alpha_beta(side)[0] if self.use_alpha_beta else dy
        if self.use_global_stats:
            # inisis returns here, so alpha and beta get no gradient with stored statistics.
            if propagate_down[0]:
                blob.mutable_diff_on(side)[...] = (g / self.std).reshape(blob.shape)
            return
        if self.use_alpha_beta:
            if self.param_propagate_down(3):
                alpha_diff = self.blobs[3].mutable_diff_on(side)
                alpha_diff += reduce_channels(self.x_norm * dy)
            if self.param_propagate_down(4):
                beta_diff = self.blobs[4].mutable_diff_on(side)
                beta_diff += reduce_channels(dy)
        if not propagate_down[0]:
            return
        y = self.x_norm
        spread = y * per_channel(reduce_channels(g * y)) + per_channel(reduce_channels(g))
        dx = (g + F32(-1.0 / (num * dy.shape[2])) * spread) / self.std
        blob.mutable_diff_on(side)[...] = dx.reshape(blob.shape)
