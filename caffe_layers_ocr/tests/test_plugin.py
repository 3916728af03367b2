"""The plugin's hooks: each block at its fork's LayerParameter number (the two the rcnn pack's 158 pushes
out at this pack's own), serialised layers carry them, and a fork's binary block reads back."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, installed_additions
from caffe_core.testing.wire import wire_field_numbers
from caffe_layers_ocr import plugin
from caffe_layers_ocr.params import CtcLossParameter, WarpCTCLossParameter

NUMBERS = {"transpose_param": 8266710, "reverse_param": 160, "ctc_decoder_param": 10158,
           "warp_ctc_loss_param": 159, "ctc_loss_param": 157, "continuation_indicator_param": 20158,
           "labelsequence_accuracy_param": 20159, "lstm_param": 1400, "denseblock_param": 1470}


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == NUMBERS
    assert blocks["ctc_loss_param"].message is CtcLossParameter
    assert blocks["warp_ctc_loss_param"].message is WarpCTCLossParameter


def test_installed_and_declared():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-ocr"}
    assert set(NUMBERS.items()) <= ours


@pytest.mark.parametrize(("text", "block", "number"), [
    ('name: "t" type: "Transpose" transpose_param { dim: 3 dim: 2 dim: 0 dim: 1 }', "transpose_param",
     8266710),
    ('name: "r" type: "Reverse" reverse_param { axis: 1 }', "reverse_param", 160),
    ('name: "d" type: "CTCGreedyDecoder" ctc_decoder_param { blank_index: -1 ctc_merge_repeated: false }',
     "ctc_decoder_param", 10158),
    ('name: "w" type: "WarpCTCLoss" warp_ctc_loss_param { blank_index: 5 }', "warp_ctc_loss_param", 159),
    ('name: "c" type: "CtcLoss" ctc_loss_param { blank_label: 0 alphabet_size: 11 time_step: 32 }',
     "ctc_loss_param", 157),
    ('name: "i" type: "ContinuationIndicator" continuation_indicator_param { time_step: 32 axis: 1 }',
     "continuation_indicator_param", 20158),
    ('name: "a" type: "LabelsequenceAccuracy" labelsequence_accuracy_param { blank_label: 3 }',
     "labelsequence_accuracy_param", 20159),
])
def test_serialised_layers_carry_the_numbers(text, block, number):
    layer = parse_text(text, caffe_pb2.LayerParameter())
    wire = layer.SerializeToString()
    assert number in wire_field_numbers(wire)
    again = caffe_pb2.LayerParameter.FromString(wire)
    assert get_param_block(again, block) == get_param_block(layer, block)


def test_ctc_loss_param_field_numbers_are_jolibrains():
    # alphabet_size 1, time_step 3, blank_label 4 (jolibrain's CtcLossParameter; 2 is unused there).
    param = CtcLossParameter(alphabet_size=11, time_step=32, blank_label=2)
    assert wire_field_numbers(param.SerializeToString()) == [1, 3, 4]
