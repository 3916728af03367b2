"""Rewriting prototxt for protobuf's parser: when it is needed, and extension names already in brackets."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_extra_field, get_param_block, message_fields


def test_an_added_field_without_any_param_block_is_still_rewritten():
    # A DropoutParameter on its own: no `..._param` anywhere, yet a pack's field zzz_keep must be translated.
    dropout = proto_io.parse_text("dropout_ratio: 0.5 zzz_keep: false", caffe_pb2.DropoutParameter())
    assert dropout.dropout_ratio == 0.5 and get_extra_field(dropout, "zzz_keep") is False


def test_text_naming_every_added_field_is_rewritten():
    names = sorted({field for _, field in message_fields()})
    # Each name is followed by an "x" so that no "..._param" ends a word there.
    text = "zzz_keep: false\n" + "".join(f"# {name}x\n" for name in names)
    dropout = proto_io.parse_text(text, caffe_pb2.DropoutParameter())
    assert get_extra_field(dropout, "zzz_keep") is False


def test_extension_written_out_in_brackets_is_kept_beside_a_plain_block_name():
    plain = 'zzz_param { mul: 2.5 } dropout_param { zzz_keep: false }'
    bracketed = '[caffe_core.ext.zzz_param] { mul: 2.5 } dropout_param { zzz_keep: false } name: "after"'
    expected = proto_io.parse_text(plain + ' name: "after"', caffe_pb2.LayerParameter())
    layer = proto_io.parse_text(bracketed, caffe_pb2.LayerParameter())
    assert get_param_block(layer, "zzz_param").mul == 2.5
    assert get_extra_field(layer.dropout_param, "zzz_keep") is False and layer.name == "after"
    assert layer == expected


@pytest.mark.parametrize("text", ['layer { convolution_param { num_output: 1 } top: ["x"',
                                  'layer { convolution_param { num_output: 1 } top: ["x", "y"'])
def test_a_list_left_open_at_the_end_is_left_to_protobuf_to_report(text):
    # The rewriter once read past the last token here and failed with a TypeError.
    with pytest.raises(PrototxtError, match=r"<string>:1:\d+: Expected"):
        proto_io.parse_text(text, caffe_pb2.NetParameter())
