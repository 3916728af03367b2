"""`str(message)` for Caffe's messages as pycaffe printed it (Python protobuf 3's text format).

pycaffe users write nets with `f.write(str(net_spec.to_proto()))`. BVLC's Python protobuf printed
float fields with Python's `str` of the stored value (`alpha: 9.999999747378752e-05`,
`mean_value: 104.0`); today's protobuf prints them differently. Installing this printer as `__str__`
of every caffe_pb2 message class keeps the text of those scripts character for character. Pack
parameter blocks print under their plain names (`zzz_param { }`), as Caffe's text format spells them.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor, message_factory, text_encoding
from google.protobuf.message import Message

_INDENT = "  "


def message_to_text(message: Message, indent: int = 0) -> str:
    """The message in pycaffe's text format: fields in number order, floats as Python's str."""
    lines: list[str] = []
    _print_message(message, indent, lines)
    return "".join(lines)


def _print_message(message: Message, indent: int, lines: list[str]) -> None:
    pad = _INDENT * indent
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for item in values:
            if field.cpp_type == descriptor.FieldDescriptor.CPPTYPE_MESSAGE:
                lines.append(f"{pad}{field.name} {{\n")
                _print_message(item, indent + 1, lines)
                lines.append(f"{pad}}}\n")
            else:
                lines.append(f"{pad}{field.name}: {_scalar_text(field, item)}\n")


def _scalar_text(field: descriptor.FieldDescriptor, value: Any) -> str:
    """value: the field's scalar, of the Python type its cpp_type stands for."""
    kind = field.cpp_type
    if kind == descriptor.FieldDescriptor.CPPTYPE_ENUM and field.enum_type is not None:
        known = field.enum_type.values_by_number.get(value)
        return known.name if known is not None else str(value)
    if kind == descriptor.FieldDescriptor.CPPTYPE_BOOL:
        return "true" if value else "false"
    if kind == descriptor.FieldDescriptor.CPPTYPE_STRING:
        raw = value.encode("utf-8") if isinstance(value, str) else value
        return '"' + text_encoding.CEscape(raw, False) + '"'
    return str(value)


def _message_types(file: descriptor.FileDescriptor) -> list[descriptor.Descriptor]:
    found: list[descriptor.Descriptor] = []
    pending = list(file.message_types_by_name.values())
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(current.nested_types)
    return found


def install(file: descriptor.FileDescriptor) -> None:
    """Makes `str()` of every message class of a schema file print pycaffe's text format."""
    for message_type in _message_types(file):
        # Replaces protobuf's printer on purpose: the message classes are protobuf's, not ours.
        message_factory.GetMessageClass(message_type).__str__ = message_to_text  # type: ignore[method-assign,assignment]
