"""upgrade_net_as_needed: Caffe's step order and log lines, and whole-chain upgrades."""

import logging

from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import (
    NET_STEPS,
    batch_norm,
    data_transform,
    input_fields,
    net_needs_upgrade,
    upgrade_net_as_needed,
    v0_to_v1,
    v1_to_v2,
)


def test_steps_run_in_caffes_order():
    assert NET_STEPS == (v0_to_v1, data_transform, v1_to_v2, input_fields, batch_norm)


def test_v0_net_goes_all_the_way_to_v2_with_caffes_messages(net_fixture, caplog):
    net = net_fixture("v0_simple")
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        assert upgrade_net_as_needed(net, "old.prototxt") is True
    assert net == net_fixture("v2_simple")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        ("INFO", "Attempting to upgrade input file specified using deprecated V0LayerParameter: "
                 "old.prototxt"),
        ("INFO", "Successfully upgraded file specified using deprecated V0LayerParameter"),
        ("WARNING", "Note that future Caffe releases will not support V0NetParameter; use "
                    "./build/tools/upgrade_net_proto_text for prototxt and "
                    "./build/tools/upgrade_net_proto_binary for model weights upgrade this and any other "
                    "net protos to the new format."),
        ("INFO", "Attempting to upgrade input file specified using deprecated V1LayerParameter: "
                 "old.prototxt"),
        ("INFO", "Successfully upgraded file specified using deprecated V1LayerParameter"),
    ]
    assert not net_needs_upgrade(net)


def test_v0_inputs_become_an_input_layer_after_the_layer_upgrades(net_fixture, caplog):
    net = net_fixture("v0_all_params")
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        assert upgrade_net_as_needed(net, "all.prototxt") is True
    first = net.layer[0]
    assert (first.name, first.type, list(first.top)) == ("input", "Input", ["pixels"])
    assert list(first.input_param.shape[0].dim) == [16, 3, 28, 28]
    assert [layer.type for layer in net.layer[1:5]] == ["Data", "ImageData", "WindowData", "HDF5Data"]
    assert not net.input and not net.input_dim and not net.layers
    assert "Attempting to upgrade input file specified using deprecated input fields: all.prototxt" \
        in caplog.messages


def test_v1_data_layer_fields_then_v2(caplog):
    net = caffe_pb2.NetParameter()
    old = net.layers.add(name="d", type=caffe_pb2.V1LayerParameter.DATA, top=["x"])
    old.data_param.source, old.data_param.scale = "db", 0.5
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        assert upgrade_net_as_needed(net, "f") is True
    assert net.layer[0].type == "Data" and net.layer[0].transform_param.scale == 0.5
    assert not net.layer[0].data_param.HasField("scale")
    assert caplog.messages[:3] == [
        "Attempting to upgrade input file specified using deprecated transformation parameters: f",
        "Successfully upgraded file specified using deprecated data transformation parameters.",
        "Note that future Caffe releases will only support transform_param messages for transformation "
        "fields.",
    ]


def test_batch_norm_step_logs_caffes_lines(caplog):
    net = caffe_pb2.NetParameter()
    bn = net.layer.add(name="bn", type="BatchNorm")
    for _ in range(3):
        bn.param.add(lr_mult=1)
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        upgrade_net_as_needed(net, "bn.prototxt")
    assert caplog.messages == ["Attempting to upgrade batch norm layers using deprecated params: bn.prototxt",
                               "Successfully upgraded batch norm layers using deprecated params."]
    assert all(spec.lr_mult == 0 and spec.decay_mult == 0 for spec in net.layer[0].param)


def test_incompatible_v0_field_makes_the_upgrade_report_failure_but_go_on(caplog):
    net = caffe_pb2.NetParameter()
    net.layers.add(top=["y"]).layer.MergeFrom(caffe_pb2.V0LayerParameter(name="r", type="relu", group=2))
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        assert upgrade_net_as_needed(net, "bad.prototxt") is False
    assert net.layer[0].type == "ReLU"
    assert "Warning: had one or more problems upgrading V0NetParameter to NetParameter (see above); " \
           "continuing anyway." in caplog.messages


def test_current_net_is_untouched(caplog):
    net = caffe_pb2.NetParameter(name="now")
    net.layer.add(name="r", type="ReLU")
    before = caffe_pb2.NetParameter()
    before.CopyFrom(net)
    with caplog.at_level(logging.INFO, logger="caffe.upgrade"):
        assert upgrade_net_as_needed(net) is True
    assert net == before and not caplog.records and not net_needs_upgrade(net)
