"""Messages declared in Python: the same wire and text format as compiled ones, defaults, enums, nesting,
references to Caffe's messages, one build per package, and clear errors for bad declarations."""

import pytest
from google.protobuf import text_format

from caffe_core.errors import PluginError
from caffe_core.messages import Enum, Field, Message, build_messages
from caffe_core.proto import caffe_pb2

CODE = Enum("CodeType", {"CORNER": 1, "CENTER_SIZE": 2})
INNER = Message("Inner", [Field("threshold", "float", 1, default=0.3), Field("top_k", "int32", 2)])
OUTER = Message("Outer", [
    Field("sizes", "float", 1, repeated=True),
    Field("flip", "bool", 4, default=True),
    Field("code", CODE, 5, default="CENTER_SIZE"),
    Field("filler", caffe_pb2.FillerParameter, 6),
    Field("inner", INNER, 7),
    Field("packed_values", "int32", 8, repeated=True, packed=True),
    Field("name", "string", 9, default="none"),
    Field("phase", caffe_pb2.Phase.DESCRIPTOR, 10, default="TEST"),
], enums=[CODE])
CLASSES = build_messages("caffe_core_tests.messages", [INNER, OUTER])
Outer, Inner = CLASSES["Outer"], CLASSES["Inner"]


def test_defaults_enums_and_nesting():
    empty = Outer()
    assert (empty.flip, empty.code, empty.name, empty.inner.threshold, empty.phase) == \
        (True, Outer.CENTER_SIZE, "none", pytest.approx(0.3), caffe_pb2.TEST)
    assert Outer.CodeType.Value("CORNER") == 1 and not empty.HasField("flip")


def test_text_format_and_references_to_caffes_messages():
    parsed = text_format.Parse('sizes: 3 sizes: 4.5 code: CORNER filler { type: "xavier" } '
                               'inner { top_k: 7 } packed_values: [1, 2] phase: TRAIN', Outer())
    assert list(parsed.sizes) == [3.0, 4.5] and parsed.code == Outer.CORNER
    assert parsed.filler.type == "xavier" and isinstance(parsed.filler, caffe_pb2.FillerParameter)
    assert parsed.inner.top_k == 7 and list(parsed.packed_values) == [1, 2]
    assert text_format.Parse(text_format.MessageToString(parsed), Outer()) == parsed


def test_wire_format_equals_a_compiled_message_with_the_same_fields():
    from caffe_zzz_testpack.zzz_pb2 import ZZZParameter

    declared = build_messages("caffe_core_tests.wire", [
        Message("Twin", [Field("mul", "float", 1, default=1.0), Field("note", "string", 2)])])["Twin"]
    compiled = ZZZParameter(mul=2.5, note="same bytes")
    assert declared(mul=2.5, note="same bytes").SerializeToString() == compiled.SerializeToString()
    assert declared.FromString(compiled.SerializeToString()).note == "same bytes"
    assert declared().mul == ZZZParameter().mul == 1.0


def test_packed_fields_are_packed_on_the_wire():
    assert Outer(packed_values=[1, 2, 3]).SerializeToString() == bytes([0x42, 3, 1, 2, 3])


def test_building_again_gives_the_same_classes_and_other_messages_are_refused():
    assert build_messages("caffe_core_tests.messages", [INNER, OUTER])["Outer"] is Outer
    with pytest.raises(PluginError, match="package 'caffe_core_tests.messages' already has other messages"):
        build_messages("caffe_core_tests.messages", [INNER])


@pytest.mark.parametrize(("field", "message"), [
    (Field("x", "floot", 1), "field 'Bad.x': unknown type 'floot'"),
    (Field("x", "float", 0), "number 0 is not a valid protobuf field number"),
    (Field("x", "float", 19001), "number 19001 is not a valid protobuf field number"),
    (Field("x", "float", 1, default="a"), "default 'a' does not suit type float"),
    (Field("x", "bool", 1, default=1), "default 1 does not suit type bool"),
    (Field("x", "int32", 1, default=1.5), "default 1.5 does not suit type int32"),
    (Field("x", CODE, 1, default="SIDE"), "default 'SIDE' is not one of CORNER, CENTER_SIZE"),
    (Field("x", "float", 1, repeated=True, default=1.0), "repeated and message fields take no default"),
    (Field("x", "string", 1, repeated=True, packed=True), "only repeated numeric or enum fields can be pa"),
    (Field("class", "float", 1), "'class' is not a valid identifier"),
    (Field("x", INNER, 1), "Message 'Inner' is not declared in this build_messages call"),
    (Field("x", 3.5, 1), "type 3.5 is neither a scalar type name"),
])
def test_bad_declarations_are_named(field, message):
    with pytest.raises(PluginError, match=message):
        build_messages("caffe_core_tests.bad", [Message("Bad", [field])], enums=[CODE])


def test_repeated_names_and_numbers_are_named():
    with pytest.raises(PluginError, match="'Bad': fields 'a' and 'b' both use number 1"):
        build_messages("caffe_core_tests.bad2", [
            Message("Bad", [Field("a", "float", 1), Field("b", "int32", 1)])])
    with pytest.raises(PluginError, match="message 'Bad' declares field 'a' twice"):
        build_messages("caffe_core_tests.bad3", [
            Message("Bad", [Field("a", "float", 1), Field("a", "int32", 2)])])


def test_an_unknown_type_lists_the_scalar_types():
    with pytest.raises(PluginError, match=r"\(a scalar type: double, float, int32, int64, uint32, uint64, "):
        build_messages("caffe_core_tests.bad", [Message("Bad", [Field("x", "floot", 1)])], enums=[CODE])
