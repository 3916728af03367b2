"""Which BN a layer means: SegNet's / ENet's (scale, shift, bn_mode) or PSPNet's family (slope, bias, moving
statistics). Both read the one merged bn_param block."""

from __future__ import annotations

from caffe_core.params import get_param_block, has_param_block
from caffe_core.proto import caffe_pb2

SEGNET_FIELDS = ("scale_filler", "shift_filler", "bn_mode")


def is_segnet_bn(param: caffe_pb2.LayerParameter) -> bool:
    """Whether the layer's bn_param sets any field only SegNet's BN has."""
    if not has_param_block(param, "bn_param"):
        return False
    block = get_param_block(param, "bn_param")
    return any(block.HasField(name) for name in SEGNET_FIELDS)
