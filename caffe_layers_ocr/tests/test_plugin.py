"""The plugin's hooks: lstm_param and denseblock_param at this pack's numbers (the forks' collide with BVLC's
and caffe-layers-rcnn's); the forks' prototxt text parses into them and survives serialisation."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, installed_additions
from caffe_core.testing.wire import wire_field_numbers
from caffe_layers_ocr import plugin
from caffe_layers_ocr.params import DenseBlockParameter, LSTMParameter

OURS = {"lstm_param": 1400, "denseblock_param": 1470}


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: blocks[name].number for name in OURS} == OURS
    assert blocks["lstm_param"].message is LSTMParameter
    assert blocks["denseblock_param"].message is DenseBlockParameter


def test_installed():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-ocr"}
    assert set(OURS.items()) <= ours


def test_defaults_are_the_forks():
    dense = DenseBlockParameter()
    assert (dense.numTransition, dense.initChannel, dense.growthRate, dense.use_BC, dense.use_dropout) == \
        (40, 16, 12, False, False)
    assert dense.moving_average_fraction == pytest.approx(0.1)
    lstm = LSTMParameter()
    assert (lstm.clipping_threshold, lstm.batch_size) == (0.0, 1)


@pytest.mark.parametrize(("text", "block", "number"), [
    # caffe_ocr's densenet and CTPN's deploy nets write these blocks.
    ('name: "lstm1" type: "Lstm" lstm_param { num_output: 256 weight_filler { type: "gaussian" std: 0.1 } '
     'bias_filler { type: "constant" } }', "lstm_param", 1400),
    ('name: "DenseBlock1" type: "DenseBlock" '
     'denseblock_param { numTransition: 8 initChannel: 64 growthRate: 8 Filter_Filler { type: "msra" } '
     'BN_Scaler_Filler { type: "constant" value: 1 } '
     'BN_Bias_Filler { type: "constant" value: 0 } use_dropout: false dropout_amount: 0.2 }',
     "denseblock_param", 1470),
])
def test_serialised_layers_carry_the_packs_numbers(text, block, number):
    layer = parse_text(text, caffe_pb2.LayerParameter())
    wire = layer.SerializeToString()
    assert number in wire_field_numbers(wire)
    again = caffe_pb2.LayerParameter.FromString(wire)
    assert get_param_block(again, block) == get_param_block(layer, block)
