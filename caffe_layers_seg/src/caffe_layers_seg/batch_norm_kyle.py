"""BatchNormKyle of inisis: Caffe's BatchNorm (mean, variance and their scale factor) with an optional
per-channel alpha and beta applied after normalising (use_alpha_beta)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field
from caffe_layers_seg.channel_ops import channel_view, per_channel, reduce_channels

F32 = np.float32


class BatchNormKyleLayer(Layer):
    """y = (x - mean) / sqrt(var + eps) [* alpha + beta], batch or stored statistics as Caffe's BatchNorm."""

    type = "BatchNormKyle"
    param_block = "batch_norm_param"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads batch_norm_param (and use_alpha_beta); creates zeroed statistics, alpha 1 and beta 0."""
        param = self.layer_param.batch_norm_param
        self.moving_average_fraction = F32(param.moving_average_fraction)
        self.use_alpha_beta = get_extra_field(param, "use_alpha_beta")
        self.use_global_stats = param.use_global_stats if param.HasField("use_global_stats") \
            else self.phase == caffe_pb2.TEST
        self.channels = 1 if bottom[0].num_axes == 1 else bottom[0].shape_at(1)
        self.eps = F32(param.eps)
        if not self.blobs:
            self.blobs = [Blob((self.channels,)), Blob((self.channels,)), Blob((1,))]
            for blob in self.blobs:
                blob.mutable_cpu_data()[...] = 0
            if self.use_alpha_beta:
                # inisis sets alpha to 1 and beta to 0; weight_filler and bias_filler are not used.
                self.blobs += [Blob((self.channels,)), Blob((self.channels,))]
                self.blobs[3].mutable_cpu_data()[...] = 1
                self.blobs[4].mutable_cpu_data()[...] = 0
        expected = 5 if self.use_alpha_beta else 3
        if len(self.blobs) != expected:
            raise self.error(f"expects {expected} blobs with batch_norm_param.use_alpha_beta "
                             f"{str(self.use_alpha_beta).lower()}, got {len(self.blobs)}")
        self.x_norm: Any = None
        self.std: Any = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the bottom's shape; the channel count must not change."""
        channels = 1 if bottom[0].num_axes == 1 else bottom[0].shape_at(1)
        if channels != self.channels:
            raise self.error(f"bottom has {channels} channels (shape {list(bottom[0].shape)}); the layer "
                             f"was set up for {self.channels}")
        top[0].reshape_like(bottom[0])

    def _alpha_beta(self, side: Side) -> tuple[Any, Any]:
        return (per_channel(self.blobs[3].data_on(side).reshape(-1)),
                per_channel(self.blobs[4].data_on(side).reshape(-1)))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises by stored (use_global_stats) or batch statistics, updating the moving averages."""
        xp = side.xp
        blob = bottom[0]
        num = blob.shape_at(0)
        x = channel_view(blob.data_on(side), num, self.channels)
        if self.use_global_stats:
            s = F32(float(self.blobs[2].data_on(side).reshape(-1)[0]))
            factor = F32(0) if s == 0 else F32(1) / s
            mean = self.blobs[0].data_on(side) * factor
            variance = self.blobs[1].data_on(side) * factor
            centred = x + per_channel(-mean)
        else:
            spatial = 1.0 / (num * x.shape[2])
            mean = reduce_channels(x, spatial)
            centred = x + per_channel(-mean)
            variance = reduce_channels(centred * centred, spatial)
            self._update_moving_averages(side, mean, variance, blob.count // self.channels)
        self.std = per_channel(xp.power(variance + self.eps, F32(0.5)))
        self.x_norm = centred / self.std
        y = self.x_norm
        if self.use_alpha_beta:
            alpha, beta = self._alpha_beta(side)
            y = beta + alpha * y
        top[0].mutable_data_on(side)[...] = y.reshape(blob.shape)

    def _update_moving_averages(self, side: Side, mean: Any, variance: Any, m: int) -> None:
        fraction = self.moving_average_fraction
        scale = self.blobs[2].mutable_data_on(side)
        scale[...] = scale * fraction + F32(1)
        moving_mean = self.blobs[0].mutable_data_on(side)
        moving_mean[...] = mean + fraction * moving_mean
        correction = F32(m) / F32(m - 1) if m > 1 else F32(1)
        moving_variance = self.blobs[1].mutable_data_on(side)
        moving_variance[...] = correction * variance + fraction * moving_variance

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (g - mean(g) - mean(g y) y) / std with g = dy [* alpha]; stored statistics: g / std only."""
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
