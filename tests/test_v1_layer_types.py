"""Caffe's TestUpgradeV1LayerType across the packs: every V1 enum value names an installed layer type."""

from caffe_core import registry
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import v1_to_v2

V1 = caffe_pb2.V1LayerParameter


def test_every_v1_type_maps_to_a_registered_layer_type():
    """Each V1 enum value names a layer type that the std, vision and data packs provide."""
    known = set(registry.layer_types())
    for value in V1.LayerType.values():
        v2_type = v1_to_v2.v2_layer_type(value)
        if v2_type == "":
            assert value == V1.NONE
            continue
        assert v2_type in known, f"{V1.LayerType.Name(value)} -> {v2_type} is not a registered layer type"
