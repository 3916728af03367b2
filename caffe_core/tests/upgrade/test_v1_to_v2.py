"""V1 -> V2: whole nets (the V1 part of what Caffe's NetUpgradeTest covers), its type table, and the per-field
mapping."""

import logging

import pytest

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import v1_to_v2

V1 = caffe_pb2.V1LayerParameter


@pytest.mark.parametrize(("v1", "v2"), [("v1_simple", "v2_simple"), ("v1_imagenet", "v2_imagenet")])
def test_v1_net_upgrades_to_caffes_v2_net(net_fixture, v1, v2):
    net = net_fixture(v1)
    assert v1_to_v2.needs(net)
    assert v1_to_v2.upgrade(net) is True
    assert net == net_fixture(v2)
    assert not v1_to_v2.needs(net)


def test_table_matches_caffes_spellings():
    assert v1_to_v2.v2_layer_type(V1.SOFTMAX_LOSS) == "SoftmaxWithLoss"
    assert v1_to_v2.v2_layer_type(V1.TANH) == "TanH"
    assert v1_to_v2.v2_layer_type(V1.IM2COL) == "Im2col"
    assert v1_to_v2.v2_layer_type(V1.HDF5_DATA) == "HDF5Data"
    assert len(v1_to_v2.V1_LAYER_TYPES) == len(V1.LayerType.values()) == 40


def test_param_specs_sharing_rules_and_blocks_carry_over():
    v1 = caffe_pb2.V1LayerParameter(
        name="ip", type=V1.INNER_PRODUCT, bottom=["x"], top=["y"],
        param=["w", "b", "extra"], blob_share_mode=[V1.PERMISSIVE, V1.STRICT],
        blobs_lr=[1.0, 2.0], weight_decay=[1.0, 0.0, 3.0, 4.0], loss_weight=[0.5],
        include=[caffe_pb2.NetStateRule(phase=caffe_pb2.TRAIN)],
        exclude=[caffe_pb2.NetStateRule(stage=["deploy"])])
    v1.blobs.add().data.extend([1.0, 2.0])
    v1.inner_product_param.num_output = 3
    v1.transform_param.scale = 0.5
    v1.loss_param.ignore_label = 7
    v1.threshold_param.threshold = 0.25
    layer = caffe_pb2.LayerParameter()
    assert v1_to_v2.upgrade_layer(v1, layer)
    spec = caffe_pb2.ParamSpec
    assert list(layer.param) == [
        spec(name="w", share_mode=spec.PERMISSIVE, lr_mult=1.0, decay_mult=1.0),
        spec(name="b", share_mode=spec.STRICT, lr_mult=2.0, decay_mult=0.0),
        spec(name="extra", decay_mult=3.0),
        spec(decay_mult=4.0),
    ]
    assert (layer.name, layer.type) == ("ip", "InnerProduct")
    assert (list(layer.bottom), list(layer.top)) == (["x"], ["y"])
    assert list(layer.loss_weight) == [0.5] and list(layer.blobs[0].data) == [1.0, 2.0]
    assert layer.include[0].phase == caffe_pb2.TRAIN and list(layer.exclude[0].stage) == ["deploy"]
    assert layer.inner_product_param.num_output == 3 and layer.transform_param.scale == 0.5
    assert layer.loss_param.ignore_label == 7 and layer.threshold_param.threshold == 0.25


def test_every_typed_block_exists_in_v2():
    assert len(v1_to_v2.PARAM_BLOCKS) == 30
    for block in v1_to_v2.PARAM_BLOCKS:
        assert block in caffe_pb2.LayerParameter.DESCRIPTOR.fields_by_name


def test_leftover_v0_layer_is_ignored_with_an_error(caplog):
    net = caffe_pb2.NetParameter()
    net.layers.add(name="a", type=V1.RELU).layer.type = "relu"
    with caplog.at_level(logging.ERROR, logger="caffe.upgrade"):
        assert v1_to_v2.upgrade(net) is False
    assert caplog.messages == ["Input NetParameter has V0 layer -- ignoring.",
                               "Upgrade of input layer 0 failed."]
    assert net.layer[0].type == "ReLU"


def test_both_layer_and_layers_is_refused():
    net = caffe_pb2.NetParameter(name="mixed")
    net.layers.add(type=V1.RELU)
    net.layer.add(type="ReLU")
    with pytest.raises(NetBuildError, match="net 'mixed': Refusing to upgrade inconsistent NetParameter"):
        v1_to_v2.upgrade(net)
