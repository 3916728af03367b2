"""The plugin's hooks: lstm_param and denseblock_param at this pack's numbers (the forks' collide with BVLC's
and caffe-layers-rcnn's); the forks' prototxt text parses into them and survives serialisation."""

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, installed_additions
from caffe_core.testing.wire import field_bytes, wire_field_numbers
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



@pytest.mark.parametrize("lstm_number", [8266711, 140], ids=["caffe_ocr", "CTPN"])
def test_fork_written_weights_load(tmp_path, lstm_number):
    # A .caffemodel as the forks write it: each layer's block at the fork's number (caffe_ocr's 147 for
    # denseblock_param; 8266711 or 140 for lstm_param, which this schema reads as other blocks or unknown
    # bytes), then its blobs. The blobs are copied by layer name.
    from caffe_core.testing.onnx_check import net_from_text

    net = net_from_text(
        'layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 dim: 3 dim: 3 } } } '
        'layer { name: "db" type: "DenseBlock" bottom: "x" top: "d" denseblock_param { numTransition: 1 '
        'growthRate: 1 } } '
        'layer { name: "in2" type: "Input" top: "s" input_param { shape { dim: 2 dim: 1 dim: 3 } } } '
        'layer { name: "lstm" type: "Lstm" bottom: "s" top: "h" lstm_param { num_output: 1 } }')
    stored = b""
    for layer in net.layers:
        if layer.type not in ("DenseBlock", "Lstm"):
            continue
        message = caffe_pb2.LayerParameter(name=layer.layer_param.name, type=layer.type)
        for i, blob in enumerate(layer.blobs):
            proto = message.blobs.add()
            proto.shape.dim.extend(blob.shape)
            proto.data.extend(np.full(blob.count, i + 1.0, np.float32))
        if layer.type == "DenseBlock":
            block = field_bytes(147, bytes([0x08, 0x01, 0x18, 0x01]))  # numTransition 1, growthRate 1
        else:
            # num_output 1, clipping_threshold 0.0
            block = field_bytes(lstm_number, bytes([0x08, 0x01, 0x15, 0, 0, 0, 0]))
        stored += field_bytes(100, message.SerializeToString() + block)
    (tmp_path / "fork.caffemodel").write_bytes(stored)
    net.copy_trained_layers_from(tmp_path / "fork.caffemodel")
    for name in ("db", "lstm"):
        for i, blob in enumerate(net.layer_by_name(name).blobs):
            np.testing.assert_array_equal(blob.cpu_data(), i + 1.0)
