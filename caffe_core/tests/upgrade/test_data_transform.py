"""V1 data layers' own transformation fields move into transform_param."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import data_transform

V1 = caffe_pb2.V1LayerParameter


@pytest.mark.parametrize(("layer_type", "block"), [(V1.DATA, "data_param"),
                                                   (V1.IMAGE_DATA, "image_data_param"),
                                                   (V1.WINDOW_DATA, "window_data_param")])
def test_fields_move_to_transform_param(layer_type, block):
    net = caffe_pb2.NetParameter()
    layer = net.layers.add(type=layer_type)
    getattr(layer, block).MergeFrom(type(getattr(layer, block))(
        source="db", scale=0.5, mean_file="mean.binaryproto", crop_size=7, mirror=True))
    assert data_transform.needs(net)
    data_transform.upgrade(net)
    moved = net.layers[0]
    assert moved.transform_param == caffe_pb2.TransformationParameter(
        scale=0.5, mean_file="mean.binaryproto", crop_size=7, mirror=True)
    assert getattr(moved, block) == type(getattr(moved, block))(source="db")
    assert not data_transform.needs(net)


def test_other_layer_types_and_v2_layers_are_left_alone():
    net = caffe_pb2.NetParameter()
    net.layers.add(type=V1.CONVOLUTION).data_param.scale = 0.5  # not a data layer: Caffe ignores it
    net.layer.add(type="Data").data_param.scale = 0.5
    assert not data_transform.needs(net)


def test_every_data_layer_gets_both_blocks_as_caffe_touches_them():
    net = caffe_pb2.NetParameter()
    net.layers.add(type=V1.DATA).data_param.mirror = True
    untouched = net.layers.add(type=V1.IMAGE_DATA)
    untouched.name = "images"
    data_transform.upgrade(net)
    assert net.layers[1].HasField("image_data_param") and net.layers[1].HasField("transform_param")
    assert net.layers[1].transform_param == caffe_pb2.TransformationParameter()
