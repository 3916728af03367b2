"""What is on the wire: the fields of a serialised protobuf message by number, to test which numbers a file
uses (a pack reproducing a fork must write the fork's), and a field encoded as protobuf writes it."""

from __future__ import annotations

import io
from typing import Any

from google.protobuf import empty_pb2
from google.protobuf.internal import encoder
from google.protobuf.unknown_fields import UnknownFieldSet


def wire_fields(data: bytes) -> dict[int, list[Any]]:
    """{field number: [payloads]} of a serialised message's top-level fields (bytes, ints...), in order."""
    message = empty_pb2.Empty()
    message.ParseFromString(data)
    fields: dict[int, list[Any]] = {}
    unknown = UnknownFieldSet(message)
    for index in range(len(unknown)):
        fields.setdefault(unknown[index].field_number, []).append(unknown[index].data)
    return fields


def wire_field_numbers(data: bytes) -> list[int]:
    """The field numbers of a serialised message's top-level fields, each once, in the order first written."""
    return list(wire_fields(data))


def field_bytes(number: int, payload: bytes) -> bytes:
    """A length-delimited field (a message, a string) as protobuf writes it."""
    written = io.BytesIO()
    encoder.BytesEncoder(number, False, False)(written.write, payload, False)
    return written.getvalue()
