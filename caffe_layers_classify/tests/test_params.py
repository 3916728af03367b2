"""The pack's parameter blocks: the forks' field numbers, types and defaults; text; the wire format."""

import numpy as np
import pytest
from google.protobuf import descriptor

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block, has_param_block
from caffe_core.testing.wire import field_bytes, wire_field_numbers
from caffe_layers_classify import params

FD = descriptor.FieldDescriptor

# (block, its LayerParameter number in the fork, a text body, the values that body sets)
BLOCKS = [
    ("hardsigmoid_param", 501, "alpha: 0.25 beta: 0.75", {"alpha": 0.25, "beta": 0.75}),
    ("unsqueeze_param", 502, "dim: -2", {"dim": -2}),
    ("relu6_param", 503, "negative_slope: 0.125 threshold: 4", {"negative_slope": 0.125, "threshold": 4.0}),
    ("shuffle_channel_param", 164, "group: 3", {"group": 3}),
]


@pytest.mark.parametrize(("message", "fields"), [
    (params.HardSigmoidParameter, [("alpha", 1, FD.TYPE_FLOAT, 0.2), ("beta", 2, FD.TYPE_FLOAT, 0.5)]),
    (params.UnsqueezeParameter, [("dim", 1, FD.TYPE_INT32, 0)]),
    (params.ReLU6Parameter, [("negative_slope", 1, FD.TYPE_FLOAT, 0.0),
                             ("threshold", 2, FD.TYPE_FLOAT, 6.0)]),
    (params.ShuffleChannelParameter, [("group", 1, FD.TYPE_UINT32, 1)]),
])
def test_messages_are_the_forks(message, fields):
    declared = message.DESCRIPTOR.fields
    assert [(f.name, f.number, f.type) for f in declared] == [field[:3] for field in fields]
    for name, _, _, default in fields:
        assert getattr(message(), name) == pytest.approx(np.float32(default))
    assert not message().HasField(fields[0][0])


@pytest.mark.parametrize(("block", "number", "body", "values"), BLOCKS)
def test_block_parses_from_text_and_keeps_the_forks_number(block, number, body, values):
    layer = proto_io.parse_text(f'name: "l" {block} {{ {body} }}', caffe_pb2.LayerParameter())
    assert has_param_block(layer, block)
    parsed = get_param_block(layer, block)
    assert {name: getattr(parsed, name) for name in values} == values
    data = layer.SerializeToString()
    assert number in wire_field_numbers(data)
    back = proto_io.parse_binary(data, caffe_pb2.LayerParameter())
    assert back == layer
    assert proto_io.parse_text(proto_io.to_text(layer), caffe_pb2.LayerParameter()) == layer


@pytest.mark.parametrize(("block", "number", "body", "values"), BLOCKS)
def test_bytes_written_with_the_forks_number_parse_as_the_block(block, number, body, values):
    message = get_param_block(caffe_pb2.LayerParameter(), block)
    for name, value in values.items():
        setattr(message, name, value)
    payload = message.SerializeToString()
    # The bytes a fork's Caffe writes: the message as a length-delimited field at the fork's number.
    data = field_bytes(number, payload)
    layer = proto_io.parse_binary(data, caffe_pb2.LayerParameter())
    assert has_param_block(layer, block)
    assert get_param_block(layer, block) == message
