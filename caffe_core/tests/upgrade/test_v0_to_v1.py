"""V0 -> V1: padding layers folded (one reader, two readers, several in a deep net), whole nets and every V0
field upgraded (the paths Caffe's PaddingLayerUpgradeTest and NetUpgradeTest cover), plus its errors."""

import logging

import pytest

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import v0_to_v1


@pytest.mark.parametrize("case", ["v0_simple", "v0_two_tops", "v0_imagenet"])
def test_padding_layers_fold_into_the_layers_they_feed(net_fixture, case):
    folded = v0_to_v1.fold_padding_layers(net_fixture(case))
    assert folded == net_fixture(f"{case}_padded")
    assert v0_to_v1.fold_padding_layers(folded) == folded  # idempotent, as Caffe's test checks


@pytest.mark.parametrize(("v0", "v1"), [("v0_simple", "v1_simple"), ("v0_all_params", "v1_all_params"),
                                        ("v0_imagenet", "v1_imagenet")])
def test_v0_net_upgrades_to_caffes_v1_net(net_fixture, v0, v1):
    upgraded, fully_compatible = v0_to_v1.upgrade_v0_net(net_fixture(v0))
    assert upgraded == net_fixture(v1)
    assert fully_compatible


def test_upgrade_in_place_and_needs(net_fixture):
    net = net_fixture("v0_simple")
    assert v0_to_v1.needs(net)
    assert v0_to_v1.upgrade(net) is True
    assert net == net_fixture("v1_simple")
    assert not v0_to_v1.needs(net)


def test_only_name_layers_inputs_and_force_backward_carry_over():
    v0 = caffe_pb2.NetParameter(name="n", force_backward=False, debug_info=True)
    v0.input.append("x")
    v0.input_dim.extend([1, 2, 3, 4])
    v0.state.phase = caffe_pb2.TEST
    v0.layers.add(bottom=["x"], top=["y"]).layer.type = "relu"
    upgraded, _ = v0_to_v1.upgrade_v0_net(v0)
    assert upgraded.HasField("force_backward") and not upgraded.force_backward
    assert list(upgraded.input) == ["x"] and list(upgraded.input_dim) == [1, 2, 3, 4]
    assert not upgraded.HasField("debug_info") and not upgraded.HasField("state")
    assert upgraded.layers[0].type == caffe_pb2.V1LayerParameter.RELU


def test_field_the_type_cannot_take_is_logged_and_reported(caplog):
    v0 = caffe_pb2.NetParameter()
    layer = v0.layers.add(top=["y"]).layer
    layer.name, layer.type, layer.num_output, layer.mirror = "r", "relu", 10, True
    with caplog.at_level(logging.ERROR, logger="caffe.upgrade"):
        upgraded, fully_compatible = v0_to_v1.upgrade_v0_net(v0)
    assert not fully_compatible
    assert "Unknown parameter num_output for layer type relu" in caplog.messages
    assert not upgraded.layers[0].HasField("inner_product_param")
    assert upgraded.layers[0].transform_param.mirror  # transformation fields fit any type


def test_shuffle_images_error_uses_caffes_name(caplog):
    v0 = caffe_pb2.NetParameter()
    layer = v0.layers.add().layer
    layer.type, layer.shuffle_images = "data", True
    with caplog.at_level(logging.ERROR, logger="caffe.upgrade"):
        _, fully_compatible = v0_to_v1.upgrade_v0_net(v0)
    assert not fully_compatible
    assert caplog.messages == ["Unknown parameter shuffle for layer type data"]


def test_pooling_pad_and_kernel_are_scalars_conv_ones_repeated():
    v0 = caffe_pb2.NetParameter()
    for kind in ("pool", "conv"):
        layer = v0.layers.add().layer
        layer.type, layer.pad, layer.kernelsize, layer.stride = kind, 1, 3, 2
    upgraded, _ = v0_to_v1.upgrade_v0_net(v0)
    pool, conv = upgraded.layers[0].pooling_param, upgraded.layers[1].convolution_param
    assert (pool.pad, pool.kernel_size, pool.stride) == (1, 3, 2)
    assert (list(conv.pad), list(conv.kernel_size), list(conv.stride)) == ([1], [3], [2])


def test_unknown_v0_type_is_a_clear_error():
    v0 = caffe_pb2.NetParameter()
    v0.layers.add().layer.type = "convolution"
    with pytest.raises(NetBuildError, match="Unknown layer name: convolution.*conv"):
        v0_to_v1.upgrade_v0_net(v0)


def test_padding_into_a_non_conv_layer_is_an_error():
    v0 = caffe_pb2.NetParameter(input=["x"])
    v0.layers.add(bottom=["x"], top=["p"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(type="padding", pad=1))
    v0.layers.add(bottom=["p"], top=["y"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(name="r", type="relu"))
    with pytest.raises(NetBuildError, match="'r': Padding layer input to non-convolutional"):
        v0_to_v1.fold_padding_layers(v0)


def test_bottom_nobody_produces_is_an_error():
    v0 = caffe_pb2.NetParameter()
    v0.layers.add(bottom=["ghost"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(name="c", type="conv"))
    with pytest.raises(NetBuildError, match="'c': unknown blob input 'ghost'"):
        v0_to_v1.fold_padding_layers(v0)


def test_padding_into_a_conv_with_two_bottoms_is_caffes_error():
    # Caffe: CHECK_EQ(layer_connection.bottom_size(), 1) << "Conv Layer takes a single blob as input."
    v0 = caffe_pb2.NetParameter(input=["x", "z"])
    v0.layers.add(bottom=["x"], top=["p"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(type="padding", pad=1))
    conv = caffe_pb2.V0LayerParameter(name="c", type="conv")
    v0.layers.add(bottom=["p", "z"], top=["y"]).layer.MergeFrom(conv)
    with pytest.raises(NetBuildError, match="'c': Conv Layer takes a single blob as input"):
        v0_to_v1.fold_padding_layers(v0)


def test_one_incompatible_layer_before_a_compatible_one_still_reports_the_net_incompatible(caplog):
    # Caffe ANDs every layer's result (is_fully_compatible &= ...), so a later good layer cannot undo it.
    v0 = caffe_pb2.NetParameter()
    bad = v0.layers.add(top=["y"]).layer
    bad.name, bad.type, bad.num_output = "r", "relu", 10
    v0.layers.add(bottom=["y"], top=["z"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(name="s", type="relu"))
    with caplog.at_level(logging.ERROR, logger="caffe.upgrade"):
        _, fully_compatible = v0_to_v1.upgrade_v0_net(v0)
    assert not fully_compatible
