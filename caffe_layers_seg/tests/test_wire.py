"""Top-level wire fields: varints, length-delimited fields, listing and removing fields."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_layers_seg import wire


@pytest.mark.parametrize(("value", "encoded"), [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"),
                                                (128, b"\x80\x01"), (300, b"\xac\x02"),
                                                (1111 << 3 | 2, b"\xba\x45")])
def test_varint(value, encoded):
    assert wire.varint(value) == encoded


def test_length_delimited_field_parses_as_protobuf_does():
    data = wire.length_delimited(1, b"conv") + wire.length_delimited(2, b"Convolution")
    layer = caffe_pb2.LayerParameter()
    layer.ParseFromString(data)
    assert (layer.name, layer.type) == ("conv", "Convolution")


def test_top_level_fields_and_removal():
    layer = caffe_pb2.LayerParameter(name="a", type="BN", loss_weight=[1.5], propagate_down=[True])
    layer.blobs.add().data.extend([1.0, 2.0])
    data = layer.SerializeToString() + wire.length_delimited(152, b"\x18\x01")
    assert [n for n, _, _ in wire.top_level_fields(data)] == [1, 2, 5, 7, 11, 152]
    stripped = caffe_pb2.LayerParameter()
    stripped.ParseFromString(wire.without_field(data, 152))
    assert stripped == layer
    assert wire.without_field(data, 7) != data


def test_unsupported_wire_type_is_named():
    with pytest.raises(ValueError, match="wire type 3"):
        list(wire.top_level_fields(b"\x0b"))
