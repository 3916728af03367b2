"""Which BN a layer means: SegNet's / ENet's (scale, shift, bn_mode) or PSPNet's family (slope, bias, moving
statistics). Both read the one merged bn_param block, and check their bottom alike."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block, has_param_block

SEGNET_FIELDS = ("scale_filler", "shift_filler", "bn_mode")


def is_segnet_bn(param: caffe_pb2.LayerParameter) -> bool:
    """Whether the layer's bn_param sets any field only SegNet's BN has."""
    if not has_param_block(param, "bn_param"):
        return False
    block = get_param_block(param, "bn_param")
    return any(block.HasField(name) for name in SEGNET_FIELDS)


class ChannelBNLayer(Layer):
    """A BN whose blobs each hold one value per channel of a bottom of at most 4 axes."""

    exact_num_bottom_blobs = 1
    bottom_num_axes = {0: (0, 4)}

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top 0: the bottom's shape; the bottom's channels must match the blobs."""
        for i, blob in enumerate(self.blobs):
            if blob.count != bottom[0].channels:
                raise self.error(f"blob {i} holds {blob.count} values but the bottom has "
                                 f"{bottom[0].channels} channels (shape {list(bottom[0].shape)})")
        top[0].reshape_like(bottom[0])
