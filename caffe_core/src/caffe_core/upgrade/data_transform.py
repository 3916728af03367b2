"""V1 data layers' own scale/mean_file/crop_size/mirror move into transform_param (Caffe's
UpgradeNetDataTransformation)."""

from __future__ import annotations

from caffe_core.proto import caffe_pb2

V1 = caffe_pb2.V1LayerParameter

# The V1 data layer types that once held transformation fields, and the block that held them.
DATA_BLOCKS = {V1.DATA: "data_param", V1.IMAGE_DATA: "image_data_param", V1.WINDOW_DATA: "window_data_param"}

TRANSFORM_FIELDS = ("scale", "mean_file", "crop_size", "mirror")


def needs(param: caffe_pb2.NetParameter) -> bool:
    """Whether a V1 data layer still sets a transformation field in its own parameter block."""
    for layer in param.layers:
        block = DATA_BLOCKS.get(layer.type)
        if block is not None and any(getattr(layer, block).HasField(f) for f in TRANSFORM_FIELDS):
            return True
    return False


def upgrade(param: caffe_pb2.NetParameter) -> None:
    """Moves those fields into transform_param and clears them."""
    for layer in param.layers:
        block_name = DATA_BLOCKS.get(layer.type)
        if block_name is None:
            continue
        block = getattr(layer, block_name)
        # Caffe touches both blocks through mutable_*(), so both end up present even when empty.
        block.SetInParent()
        layer.transform_param.SetInParent()
        for field in TRANSFORM_FIELDS:
            if block.HasField(field):
                setattr(layer.transform_param, field, getattr(block, field))
                block.ClearField(field)
