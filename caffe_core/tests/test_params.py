"""A pack's own parameter block: parsed from text, validated by its schema, kept through a .caffemodel."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import PrototxtError
from caffe_core.net import read_net_binary
from caffe_core.params import get_param_block
from caffe_core.proto import caffe_pb2

TEXT = """
name: "plugin-net"
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
layer { name: "z" type: "ZZZ" bottom: "x" top: "y" zzz_param { mul: 2.5 note: "kept" } }
"""


def test_block_parses_and_prints_under_its_plain_name():
    param = proto_io.parse_text(TEXT, caffe_pb2.NetParameter())
    block = get_param_block(param.layer[1], "zzz_param")
    assert block.mul == 2.5 and block.note == "kept"
    text = proto_io.to_text(param)
    assert "  zzz_param {\n    mul: 2.5\n    note: \"kept\"\n  }" in text
    again = proto_io.parse_text(text, caffe_pb2.NetParameter())
    assert again == param


def test_block_is_validated_against_the_pack_schema():
    with pytest.raises(PrototxtError, match=r"bad\.prototxt:1:36: Couldn't parse float"):
        proto_io.parse_text('layer { name: "z" zzz_param { mul: "many" } }', caffe_pb2.NetParameter(),
                            "bad.prototxt")
    with pytest.raises(PrototxtError, match="no field named \"factor\""):
        proto_io.parse_text('layer { name: "z" zzz_param { factor: 2 } }', caffe_pb2.NetParameter())


def test_block_survives_a_caffemodel_round_trip(tmp_path):
    from caffe_core.net import Net

    net = Net(proto_io.parse_text(TEXT, caffe_pb2.NetParameter()))
    path = tmp_path / "plugin.caffemodel"
    net.save(path)
    loaded = read_net_binary(path)
    assert get_param_block(loaded.layer[1], "zzz_param").mul == 2.5
    rebuilt = Net(loaded)
    rebuilt.blob_by_name("x").data[...] = [1, 2, 4]
    rebuilt.forward()
    assert rebuilt.blob_by_name("y").data.tolist() == [[2.5, 5.0, 10.0]]


def test_unknown_fork_blocks_are_dropped_so_the_file_parses(caplog):
    text = 'layer {\n name: "p"\n type: "PriorBox"\n prior_box_param { min_size: 30 aspect_ratio: [2, 3] }\n}'
    param = proto_io.parse_text(text, caffe_pb2.NetParameter(), "ssd.prototxt")
    assert param.layer[0].type == "PriorBox"
    assert "ssd.prototxt:4: ignoring parameter block 'prior_box_param'" in caplog.text


def test_ceil_mode_alias_becomes_round_mode():
    param = proto_io.parse_text('layer { pooling_param { kernel_size: 3 ceil_mode: false } }',
                                caffe_pb2.NetParameter())
    assert param.layer[0].pooling_param.round_mode == caffe_pb2.PoolingParameter.FLOOR
