"""BN of SegNet and ENet (bn_mode LEARN / INFERENCE): a per-channel scale and shift after normalising by the
batch statistics in every phase (LEARN), or the scale and shift alone (INFERENCE, statistics folded in)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg.bn_variant import ChannelBNLayer, is_segnet_bn
from caffe_layers_seg.channel_ops import channel_view, per_channel, reduce_channels
from caffe_layers_seg.params import BNParameter

F32 = np.float32
SEGNET_EPS = F32(1e-9)


class SegNetBNLayer(ChannelBNLayer):
    """y = scale (x - E x) / sqrt(E x^2 - (E x)^2 + 1e-9) + shift (LEARN), or scale x + shift (INFERENCE)."""

    type = "BN"
    min_top_blobs = 1
    max_top_blobs = 3

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        super().__init__(param)
        self.learn = get_param_block(param, "bn_param").bn_mode == BNParameter.LEARN
        self.max_top_blobs = 3 if self.learn else 1

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """BN layers whose bn_param sets one of SegNet's fields (scale_filler, shift_filler, bn_mode)."""
        return is_segnet_bn(param)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates the scale and shift blobs (1, C, 1, 1) from scale_filler and shift_filler."""
        param = get_param_block(self.layer_param, "bn_param")
        if not self.blobs:
            channels = bottom[0].channels
            self.blobs = [Blob((1, channels, 1, 1)), Blob((1, channels, 1, 1))]
            get_filler(param.scale_filler).fill(self.blobs[0])
            get_filler(param.shift_filler).fill(self.blobs[1])
        if len(self.blobs) != 2:
            raise self.error(f"expects 2 blobs (scale, shift), got {len(self.blobs)}")
        self.x_norm: Array | None = None
        self.std: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top 0: the bottom's shape; tops 1 and 2 (LEARN only): (1, C, 1, 1)."""
        super().reshape(bottom, top)
        for blob in top[1:]:
            blob.reshape((1, bottom[0].channels, 1, 1))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises by the batch statistics (LEARN) and applies scale and shift."""
        xp = side.xp
        blob = bottom[0]
        x = channel_view(blob.data_on(side), blob.num, blob.channels)
        scale = per_channel(self.blobs[0].data_on(side).reshape(-1))
        shift = per_channel(self.blobs[1].data_on(side).reshape(-1))
        if not self.learn:
            top[0].mutable_data_on(side)[...] = (x * scale + shift).reshape(blob.shape)
            return
        spatial, batch = 1.0 / (blob.height * blob.width), 1.0 / blob.num
        mean = reduce_channels(x, spatial, batch)
        # SegNet's variance is E(x^2) - (E x)^2, not the mean of the centred squares.
        variance = reduce_channels(x * x, spatial, batch) - mean * mean
        for blob_top, values in zip(top[1:], (mean, variance), strict=False):
            blob_top.mutable_data_on(side)[...] = values.reshape(blob_top.shape)
        self.std = per_channel(xp.power(variance + SEGNET_EPS, F32(0.5)))
        self.x_norm = (x + per_channel(-mean)) / self.std
        top[0].mutable_data_on(side)[...] = (self.x_norm * scale + shift).reshape(blob.shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Scale and shift diffs, and dx by the batch formula (LEARN) or dy scale (INFERENCE)."""
        blob = bottom[0]
        dy = channel_view(top[0].diff_on(side), blob.num, blob.channels)
        normalised = self.x_norm if self.learn else channel_view(blob.data_on(side), blob.num, blob.channels)
        if self.param_propagate_down(0):
            scale_diff = self.blobs[0].mutable_diff_on(side).reshape(-1)
            scale_diff += reduce_channels(normalised * dy)
        if self.param_propagate_down(1):
            shift_diff = self.blobs[1].mutable_diff_on(side).reshape(-1)
            shift_diff += reduce_channels(dy)
        if not propagate_down[0]:
            return
        g = dy * per_channel(self.blobs[0].data_on(side).reshape(-1))
        if self.learn:
            assert self.x_norm is not None and self.std is not None  # set by forward in LEARN
            y = self.x_norm
            spread = y * per_channel(reduce_channels(y * g)) + per_channel(reduce_channels(g))
            g = (g + F32(-1.0 / (dy.shape[0] * dy.shape[2])) * spread) / self.std
        blob.mutable_diff_on(side)[...] = g.reshape(blob.shape)
