"""The net builder: Caffe's Net::Init from a NetParameter to layer records (filtering, splits, wiring)."""

import pytest

from caffe_core import proto_io, registry
from caffe_core.errors import NetBuildError
from caffe_core.layer import Layer
from caffe_core.net_builder import build_net, net_parameter
from caffe_core.proto import caffe_pb2

from .conftest import INPUT, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


class TwoAutomaticTops(Layer):
    """Test layer that makes two tops whether or not the prototxt names them."""

    type = "TestTwoTops"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 2
    auto_top_blobs = True

    def reshape(self, bottom, top):
        for blob in top:
            blob.reshape_like(bottom[0])


def test_filtering_by_phase_level_and_stage():
    text = INPUT + """
    layer { name: "train_only" type: "TestScale" bottom: "x" top: "a" include { phase: TRAIN } }
    layer { name: "test_only" type: "TestScale" bottom: "x" top: "b" include { phase: TEST } }
    layer { name: "deep" type: "TestScale" bottom: "x" top: "c" include { min_level: 2 } }
    layer { name: "staged" type: "TestScale" bottom: "x" top: "d" include { stage: "s1" stage: "s2" } }
    layer { name: "not_s1" type: "TestScale" bottom: "x" top: "e" exclude { stage: "s1" } }
    """
    assert build(text, caffe_pb2.TRAIN).layer_names == ["data", "x_data_0_split", "train_only", "not_s1"]
    assert build(text, caffe_pb2.TEST, level=3).layer_names == ["data", "x_data_0_split", "test_only", "deep",
                                                                "not_s1"]
    assert build(text, caffe_pb2.TEST, stages=["s1", "s2"]).layer_names == ["data", "x_data_0_split",
                                                                           "test_only", "staged"]


def test_include_and_exclude_together_is_refused():
    text = INPUT + 'layer { name: "l" type: "TestScale" bottom: "x" top: "y" include { phase: TEST } ' \
                   'exclude { phase: TRAIN } }'
    with pytest.raises(NetBuildError, match="either include rules or exclude rules"):
        build(text)


def test_split_of_a_loss_top_carries_the_loss_weight():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" loss_weight: 2 }
    layer { name: "loss" type: "TestSumLoss" bottom: "y" top: "loss" }
    """
    net = build(text)
    split = net.layer_by_name("y_s_0_split")
    assert list(split.layer_param.loss_weight) == [2.0, 0.0]
    loss_layer = net.layers[net.layer_names.index("loss")]
    assert loss_layer.layer_param.bottom == ["y_s_0_split_1"]


def test_propagate_down_count_must_match_bottoms():
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" propagate_down: true ' \
                   'propagate_down: false }'
    with pytest.raises(NetBuildError, match="propagate_down must be given either 0 or 1"):
        build(text)


def test_missing_bottom_and_duplicate_top_are_named():
    with pytest.raises(NetBuildError, match=r"Unknown bottom blob 'nope' \(layer 's', bottom index 0\)"):
        build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "nope" top: "y" }')
    with pytest.raises(NetBuildError, match="Top blob 'y' produced by multiple sources"):
        build(INPUT + 'layer { name: "a" type: "TestScale" bottom: "x" top: "y" }'
                      'layer { name: "b" type: "TestScale" bottom: "x" top: "y" }')


def test_wrong_blob_count_names_type_and_counts():
    with pytest.raises(Exception, match=r"TestScale layer 's' takes 1 bottom blob\(s\) as input, got 2"):
        build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" bottom: "x" top: "y" }')


def test_net_parameter_copies_a_message_and_sets_the_state_it_is_given():
    source = proto_io.parse_text(INPUT + 'state { stage: "old" }', caffe_pb2.NetParameter())
    param = net_parameter(source, phase=caffe_pb2.TRAIN, level=2, stages=["new"])
    assert (param.state.phase, param.state.level, list(param.state.stage)) == (caffe_pb2.TRAIN, 2, ["new"])
    assert list(source.state.stage) == ["old"] and not source.state.HasField("phase")
    assert list(net_parameter(source).state.stage) == ["old"]


def test_an_in_place_top_is_its_bottom_and_automatic_tops_are_unnamed_blobs():
    registry.register_layer("TestTwoTops", TwoAutomaticTops)
    try:
        graph = build_net(net_parameter(proto_io.parse_text(INPUT + """
        layer { name: "s" type: "TestScale" bottom: "x" top: "x" }
        layer { name: "two" type: "TestTwoTops" bottom: "x" top: "a" }
        """, caffe_pb2.NetParameter())))
    finally:
        registry.unregister_layer("TestTwoTops")
    assert [blob.name for blob in graph.blobs] == ["x", "a", "(automatic)"]
    assert (graph.layers[1].bottoms, graph.layers[1].tops) == ([0], [0])
    assert graph.layers[2].tops == [1, 2] and graph.layers[2].top_blobs[1] is graph.blobs[2].blob
    assert graph.inputs == [0] and graph.outputs == [1]
    assert graph.layer_ids == {"data": 0, "s": 1, "two": 2} and graph.blob_ids["a"] == 1
