"""Our caffe.proto against BVLC's field table: every field's name, number, label, type, default, packing,
and every enum value, so files stay wire- and text-compatible."""

import csv
import pathlib

import pytest
from google.protobuf import descriptor

from caffe_core.proto import caffe_pb2

TABLE = pathlib.Path(__file__).parent / "golden" / "caffe_proto_fields.tsv"
SCALARS = {descriptor.FieldDescriptor.TYPE_INT64: "int64", descriptor.FieldDescriptor.TYPE_INT32: "int32",
           descriptor.FieldDescriptor.TYPE_UINT32: "uint32", descriptor.FieldDescriptor.TYPE_FLOAT: "float",
           descriptor.FieldDescriptor.TYPE_DOUBLE: "double", descriptor.FieldDescriptor.TYPE_STRING: "string",
           descriptor.FieldDescriptor.TYPE_BYTES: "bytes", descriptor.FieldDescriptor.TYPE_BOOL: "bool"}


def read_table():
    fields, enums = [], []
    part = fields
    with open(TABLE) as f:
        for row in csv.reader(f, delimiter="\t"):
            if not row or not row[0] or row[0] == "message":
                continue
            if row[:2] == ["enum", "value"]:
                part = enums
                continue
            part.append(row)
    return fields, enums


FIELDS, ENUMS = read_table()


def find(path: str):
    message, _, nested = path.partition(".")
    found = caffe_pb2.DESCRIPTOR.message_types_by_name.get(message) or \
        caffe_pb2.DESCRIPTOR.enum_types_by_name[message]
    return found.enum_types_by_name[nested] if nested else found


def label_of(field: descriptor.FieldDescriptor) -> str:
    return "repeated" if field.is_repeated else "required" if field.is_required else "optional"


def type_name(field: descriptor.FieldDescriptor) -> str:
    if field.type in SCALARS:
        return SCALARS[field.type]
    target = field.message_type or field.enum_type
    return target.full_name.removeprefix("caffe_core.")


def default_text(field: descriptor.FieldDescriptor) -> str:
    if not field.has_default_value:
        return ""
    value = field.default_value
    if field.enum_type is not None:
        return field.enum_type.values_by_number[value].name
    if field.type == descriptor.FieldDescriptor.TYPE_STRING:
        return repr(value)
    return str(value)


def test_table_has_every_caffe_message():
    assert len(FIELDS) > 400 and len(ENUMS) > 100


@pytest.mark.parametrize("row", FIELDS, ids=lambda r: f"{r[0]}.{r[1]}")
def test_field_matches_bvlc(row):
    message, name, number, label, kind, default, packed = (row + [""] * 7)[:7]
    field = find(message).fields_by_name[name]
    assert field.number == int(number)
    assert label_of(field) == label
    assert type_name(field) == kind
    if default:
        got = default_text(field)
        if field.type in (descriptor.FieldDescriptor.TYPE_FLOAT, descriptor.FieldDescriptor.TYPE_DOUBLE):
            assert float(got) == pytest.approx(float(default), rel=1e-7)
        elif field.type == descriptor.FieldDescriptor.TYPE_STRING:
            assert got.strip("'") == default.strip("'")
        else:
            assert got == default
    assert field.is_packed == (packed == "packed")


@pytest.mark.parametrize("row", ENUMS, ids=lambda r: f"{r[0]}.{r[1]}")
def test_enum_value_matches_bvlc(row):
    enum, name, number = row[:3]
    assert find(enum).values_by_name[name].number == int(number)


def test_every_message_has_exactly_bvlcs_fields():
    declared = {}
    for message, name, *_ in FIELDS:
        declared.setdefault(message, set()).add(name)
    for message, names in declared.items():
        assert set(find(message).fields_by_name) == names, message
