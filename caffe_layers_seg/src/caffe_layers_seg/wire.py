"""Protobuf wire format at the level of a message's top-level fields, for blocks kept at numbers no installed
schema declares (e.g. PSPNet's bn_param 152, an unknown field here)."""

from __future__ import annotations

from collections.abc import Iterator

LENGTH_DELIMITED = 2


def varint(value: int) -> bytes:
    """The base-128 varint encoding of a non-negative integer."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def length_delimited(number: int, payload: bytes) -> bytes:
    """One length-delimited field (a message, string or bytes) with its tag."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload


def top_level_fields(data: bytes) -> Iterator[tuple[int, int, int]]:
    """(field number, start, end) of each top-level field of a serialised message, in order."""
    pos = 0
    while pos < len(data):
        start = pos
        tag, pos = _read_varint(data, pos)
        wire_type = tag & 7
        if wire_type == 0:
            _, pos = _read_varint(data, pos)
        elif wire_type == LENGTH_DELIMITED:
            size, pos = _read_varint(data, pos)
            pos += size
        elif wire_type in (1, 5):
            pos += 8 if wire_type == 1 else 4
        else:
            raise ValueError(f"unsupported wire type {wire_type} at byte {start}")
        yield tag >> 3, start, pos


def without_field(data: bytes, number: int) -> bytes:
    """A serialised message with every top-level occurrence of one field number removed."""
    return b"".join(data[start:end] for field, start, end in top_level_fields(data) if field != number)
