"""BN of PSPNet, TSN and the DeepLab-style forks (and inisis'): per-channel slope and bias with moving
batch statistics.

The forks disagree on what blob 3 holds. PSPNet and TSN store the moving VARIANCE and apply (var + eps)^-1/2;
inisis stores the moving INVERSE STD and applies it as it is (eps only enters the training branch, before
the ^-1/2). A layer's `statistics` says which it holds: a fresh layer holds variances (the public PSPNet and
TSN models); a layer whose blobs a net copies from a stored layer takes that layer's convention, known from
where its bn_param block sits: inisis' number 1111 (this pack's) means inverse std, PSPNet's 152 (unknown to
this schema) or TSN's 137 (BVLC's embed_param) means variance. `to_proto` writes the block back at 152 for
variances and at 1111 for inverse stds, so a saved file reloads with its convention (and in that fork).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from google.protobuf.unknown_fields import UnknownFieldSet

from caffe_core.array_types import Array
from caffe_core.blob import Blob, proto_shape
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block, has_param_block, param_blocks
from caffe_layers_seg import wire
from caffe_layers_seg.bn_variant import ChannelBNLayer, is_segnet_bn
from caffe_layers_seg.channel_ops import channel_view, per_channel, reduce_channels

if TYPE_CHECKING:
    # The stubs take ClearExtension's field as this subclass, which only generated code declares; bn_param
    # is declared at run time.
    from google.protobuf.internal.extension_dict import _ExtensionFieldDescriptor

F32 = np.float32
VARIANCE = "variance"
INVERSE_STD = "inverse_std"
PSPNET_BN_NUMBER = 152


def stored_statistics(source: caffe_pb2.LayerParameter) -> str | None:
    """What a stored BN layer's blob 3 holds, from where its bn_param sits (None: the file does not say)."""
    if has_param_block(source, "bn_param"):
        return INVERSE_STD
    unknown = UnknownFieldSet(source)
    if any(unknown[index].field_number == PSPNET_BN_NUMBER for index in range(len(unknown))):
        return VARIANCE
    if source.HasField("embed_param"):
        return VARIANCE
    return None


def _channels_only(shape: tuple[int, ...]) -> int | None:
    """C for a shape (1, C) followed by ones, else None."""
    if len(shape) < 2 or shape[0] != 1 or any(d != 1 for d in shape[2:]):
        return None
    return shape[1]


class StatisticsBlob(Blob):
    """A blob of C values that takes a stored blob of either fork's shape, (1, C) or (1, C, 1, 1)."""

    def shape_equals(self, proto: caffe_pb2.BlobProto) -> bool:
        """Whether the stored blob has this shape, or the other fork's shape for the same C."""
        channels = _channels_only(self.shape)
        return super().shape_equals(proto) or (
            channels is not None and _channels_only(proto_shape(proto)) == channels)


class PSPNetBNLayer(ChannelBNLayer):
    """y = slope (x - mean) / std + bias; batch statistics and moving averages in TRAIN unless frozen."""

    type = "BN"
    exact_num_top_blobs = 1

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        super().__init__(param)
        self.blobs = []
        for stored in param.blobs:
            blob = StatisticsBlob()
            blob.from_proto(stored)
            self.blobs.append(blob)
        self.statistics = (stored_statistics(param) or VARIANCE) if param.blobs else VARIANCE

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """BN layers whose bn_param sets none of SegNet's fields (scale_filler, shift_filler, bn_mode)."""
        return not is_segnet_bn(param)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads frozen, momentum and eps; creates slope, bias, mean and variance; pins the statistics' lr."""
        param = get_param_block(self.layer_param, "bn_param")
        self.frozen = param.frozen
        self.momentum = F32(param.momentum)
        self.eps = F32(param.eps)
        channels = bottom[0].channels
        if not self.blobs:
            self.blobs = [StatisticsBlob((1, channels, 1, 1)) for _ in range(4)]
            get_filler(param.slope_filler).fill(self.blobs[0])
            get_filler(param.bias_filler).fill(self.blobs[1])
            self.blobs[2].mutable_cpu_data()[...] = 0
            self.blobs[3].mutable_cpu_data()[...] = 1 if self.frozen else 0
        if len(self.blobs) != 4:
            raise self.error(f"expects 4 blobs (slope, bias, moving mean, moving statistic), got "
                             f"{len(self.blobs)}")
        # As the forks: the moving statistics are not learned, and frozen layers learn nothing.
        while len(self.layer_param.param) < 4:
            self.layer_param.param.add()
        for i in (0, 1, 2, 3) if self.frozen else (2, 3):
            self.layer_param.param[i].lr_mult = 0
            self.layer_param.param[i].decay_mult = 0
        self.x_norm: Array | None = None
        self.inv_std: Array | None = None

    def _uses_stored(self) -> bool:
        return self.frozen or self.phase == caffe_pb2.TEST

    def _stored_inv_std(self, side: Side) -> Array:
        """The inverse std the stored statistic gives: (var + eps)^-1/2, or the stored value itself."""
        stored = self.blobs[3].data_on(side).reshape(-1)
        if self.statistics == INVERSE_STD:
            return stored
        return side.xp.power(stored + self.eps, F32(-0.5))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises with stored (TEST, frozen) or batch statistics (TRAIN, updating the moving averages)."""
        xp = side.xp
        blob = bottom[0]
        x = channel_view(blob.data_on(side), blob.num, blob.channels)
        spatial, batch = 1.0 / (blob.height * blob.width), 1.0 / blob.num
        keep = F32(1) - self.momentum
        if self._uses_stored():
            mean = self.blobs[2].data_on(side).reshape(-1)
        else:
            mean = reduce_channels(x, spatial, batch)
            moving_mean = self.blobs[2].mutable_data_on(side).reshape(-1)
            moving_mean[...] = keep * mean + self.momentum * moving_mean
        centred = x + per_channel(-mean)
        if self._uses_stored():
            inv_std = self._stored_inv_std(side)
        else:
            variance = reduce_channels(centred * centred, spatial, batch)
            inv_std = xp.power(variance + self.eps, F32(-0.5))
            moving = self.blobs[3].mutable_data_on(side).reshape(-1)
            batch_statistic = variance if self.statistics == VARIANCE else inv_std
            moving[...] = keep * batch_statistic + self.momentum * moving
        x_norm = centred * per_channel(inv_std)
        if not self.frozen:
            self.x_norm, self.inv_std = x_norm, inv_std
        slope = self.blobs[0].data_on(side).reshape(-1)
        bias = self.blobs[1].data_on(side).reshape(-1)
        y = x_norm * per_channel(slope) + per_channel(bias)
        top[0].mutable_data_on(side)[...] = y.reshape(blob.shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Frozen: dx = dy slope inv_std. Else the batch formula (also in TEST), with slope and bias diffs."""
        blob = bottom[0]
        dy = channel_view(top[0].diff_on(side), blob.num, blob.channels)
        slope = self.blobs[0].data_on(side).reshape(-1)
        if self.frozen:
            if propagate_down[0]:
                scale = slope * self._stored_inv_std(side)
                blob.mutable_diff_on(side)[...] = (dy * per_channel(scale)).reshape(blob.shape)
            return
        assert self.x_norm is not None and self.inv_std is not None  # kept by forward unless frozen
        if self.param_propagate_down(0):
            slope_diff = self.blobs[0].mutable_diff_on(side).reshape(-1)
            slope_diff += reduce_channels(self.x_norm * dy)
        if self.param_propagate_down(1):
            bias_diff = self.blobs[1].mutable_diff_on(side).reshape(-1)
            bias_diff += reduce_channels(dy)
        if not propagate_down[0]:
            return
        g = dy * per_channel(slope)
        spread = self.x_norm * per_channel(reduce_channels(self.x_norm * g)) + per_channel(reduce_channels(g))
        mean_scale = F32(-1) / F32(dy.shape[0] * dy.shape[2])
        dx = (g + mean_scale * spread) * per_channel(self.inv_std)
        blob.mutable_diff_on(side)[...] = dx.reshape(blob.shape)

    def adopt_stored_layer(self, source: caffe_pb2.LayerParameter) -> None:
        """Takes the stored layer's statistics convention and its blobs' shapes ((1, C) or (1, C, 1, 1))."""
        self.statistics = stored_statistics(source) or self.statistics
        for blob, stored in zip(self.blobs, source.blobs, strict=True):
            blob.reshape(proto_shape(stored))

    def to_proto(self, write_diff: bool = False) -> caffe_pb2.LayerParameter:
        """The layer with bn_param at 1111 (inverse std, as inisis) or at PSPNet's 152 (variance)."""
        proto = super().to_proto(write_diff)
        block = get_param_block(proto, "bn_param")
        block.SetInParent()
        if self.statistics == INVERSE_STD:
            return proto
        payload = block.SerializeToString()
        extension = cast("_ExtensionFieldDescriptor[caffe_pb2.LayerParameter, Any]",
                         param_blocks()["bn_param"])
        proto.ClearExtension(extension)
        data = wire.without_field(proto.SerializeToString(), PSPNET_BN_NUMBER)
        proto.ParseFromString(data + wire.length_delimited(PSPNET_BN_NUMBER, payload))
        return proto
