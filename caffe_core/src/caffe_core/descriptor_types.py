"""Type names for protobuf descriptors: `MessageDescriptor` and `FieldDescriptor`.

protobuf's stubs type a message class's `DESCRIPTOR` (and the fields it lists) as either the pure-Python
descriptor or the upb backend's, which is what runs; code that takes a message's descriptor names both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from google.protobuf import descriptor

if TYPE_CHECKING:
    from google._upb import _message as upb

MessageDescriptor: TypeAlias = "descriptor.Descriptor | upb.Descriptor"
FieldDescriptor: TypeAlias = "descriptor.FieldDescriptor | upb.FieldDescriptor"
