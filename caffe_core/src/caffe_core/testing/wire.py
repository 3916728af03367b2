"""What is on the wire: the field numbers of a serialised protobuf message (which numbers a file uses)."""

from __future__ import annotations

from google.protobuf.internal import decoder

_FIXED_SIZES = {1: 8, 5: 4}


def wire_field_numbers(data: bytes) -> list[int]:
    """The field numbers of a serialised message's top-level fields, in the order they are written."""
    numbers, pos = [], 0
    while pos < len(data):
        tag, pos = decoder._DecodeVarint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        numbers.append(number)
        if wire_type == 0:
            _, pos = decoder._DecodeVarint(data, pos)
        elif wire_type == 2:
            size, pos = decoder._DecodeVarint(data, pos)
            pos += size
        elif wire_type in _FIXED_SIZES:
            pos += _FIXED_SIZES[wire_type]
        else:
            raise ValueError(f"wire type {wire_type} of field {number} is not one a Caffe file uses")
    return numbers
