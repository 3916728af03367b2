"""Protobuf messages declared in Python: a pack's parameter blocks with no .proto file and no protoc.

    CODE_TYPE = Enum("CodeType", {"CORNER": 1, "CENTER_SIZE": 2})
    PRIOR_BOX = Message("PriorBoxParameter", [
        Field("min_size", "float", 1, repeated=True),
        Field("flip", "bool", 4, default=True),
        Field("code_type", CODE_TYPE, 5, default="CORNER"),
        Field("filler", caffe_pb2.FillerParameter, 6),
    ], enums=[CODE_TYPE])
    classes = build_messages("my_pack", [PRIOR_BOX])
    PriorBoxParameter = classes["PriorBoxParameter"]

The classes are ordinary protobuf messages: they parse from text, serialise, and behave exactly like
classes compiled from a .proto with the same fields (same wire format, same text format).
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias, cast

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, message, message_factory

from caffe_core.errors import PluginError

_FDP = descriptor_pb2.FieldDescriptorProto
SCALAR_TYPES = {
    "double": _FDP.TYPE_DOUBLE, "float": _FDP.TYPE_FLOAT, "int32": _FDP.TYPE_INT32,
    "int64": _FDP.TYPE_INT64, "uint32": _FDP.TYPE_UINT32, "uint64": _FDP.TYPE_UINT64,
    "sint32": _FDP.TYPE_SINT32, "sint64": _FDP.TYPE_SINT64, "fixed32": _FDP.TYPE_FIXED32,
    "fixed64": _FDP.TYPE_FIXED64, "sfixed32": _FDP.TYPE_SFIXED32, "sfixed64": _FDP.TYPE_SFIXED64,
    "bool": _FDP.TYPE_BOOL, "string": _FDP.TYPE_STRING, "bytes": _FDP.TYPE_BYTES,
}
_INTEGER_TYPES = {name for name in SCALAR_TYPES if "int" in name or "fixed" in name}
MAX_FIELD_NUMBER = 536_870_911
RESERVED_NUMBERS = range(19_000, 20_000)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Packages already built, with the file they were built from, so a re-imported module gets the same classes.
_built: dict[str, tuple[bytes, dict[str, Any]]] = {}


@dataclasses.dataclass(frozen=True)
class Enum:
    """An enum: value names and their numbers."""

    name: str
    values: Mapping[str, int]


# A field's type: a scalar type's name, a Message or Enum of the same build_messages call, a protobuf enum's
# descriptor or a protobuf message class.
FieldType: TypeAlias = "str | Message | Enum | descriptor.EnumDescriptor | type[message.Message]"


@dataclasses.dataclass(frozen=True)
class Field:
    """One field: its name, type, number, default, and whether it is repeated (and packed)."""

    name: str
    type: FieldType
    number: int
    default: Any = None
    repeated: bool = False
    packed: bool = False


@dataclasses.dataclass(frozen=True)
class Message:
    """A message: its fields and the enums declared inside it."""

    name: str
    fields: Sequence[Field]
    enums: Sequence[Enum] = ()


def build_messages(package: str, messages: Sequence[Message], enums: Sequence[Enum] = ()) -> dict[str, Any]:
    """Builds the message classes of one package (one call per package); returns them by name."""
    _check_name(package.replace(".", "_"), f"package '{package}'")
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=f"{package.replace('.', '/')}.proto", package=package, syntax="proto2")
    scopes = {id(e): f".{package}.{e.name}" for e in enums}
    scopes.update({id(e): f".{package}.{m.name}.{e.name}" for m in messages for e in m.enums})
    scopes.update({id(m): f".{package}.{m.name}" for m in messages})
    for enum in enums:
        _add_enum(file_proto.enum_type.add(), enum)
    for declared in messages:
        _add_message(file_proto, declared, scopes)
    key = file_proto.SerializeToString(deterministic=True)
    if package in _built:
        if _built[package][0] != key:
            raise PluginError(f"package '{package}' already has other messages declared; "
                              f"call build_messages once per package")
        return dict(_built[package][1])
    pool = descriptor_pool.Default()
    try:
        pool.Add(file_proto)
    except TypeError as err:
        raise PluginError(f"messages of package '{package}' cannot be built: {err}") from None
    classes = {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{package}.{m.name}"))
               for m in messages}
    _built[package] = (key, classes)
    return dict(classes)


def field_proto(field: Field, scopes: Mapping[int, str], where: str) -> descriptor_pb2.FieldDescriptorProto:
    """The FieldDescriptorProto of a declared field, its type resolved and its default checked."""
    where = f"{where}.{field.name}"
    _check_name(field.name, f"field '{where}'")
    if not isinstance(field.number, int) or not 0 < field.number <= MAX_FIELD_NUMBER \
            or field.number in RESERVED_NUMBERS:
        raise PluginError(f"field '{where}': number {field.number!r} is not a valid protobuf field number "
                          f"(1 to {MAX_FIELD_NUMBER}, not 19000-19999)")
    proto = descriptor_pb2.FieldDescriptorProto(
        name=field.name, number=field.number,
        label=_FDP.LABEL_REPEATED if field.repeated else _FDP.LABEL_OPTIONAL)
    kind = field.type
    if isinstance(kind, str):
        if kind not in SCALAR_TYPES:
            scalars = ", ".join(SCALAR_TYPES)
            raise PluginError(f"field '{where}': unknown type '{kind}' (a scalar type: {scalars}; "
                              f"or a Message, an Enum or a protobuf message class)")
        proto.type = SCALAR_TYPES[kind]
    elif isinstance(kind, (Message, Enum)):
        if id(kind) not in scopes:
            raise PluginError(f"field '{where}': {type(kind).__name__} '{kind.name}' is not declared in "
                              f"this build_messages call")
        proto.type = _FDP.TYPE_MESSAGE if isinstance(kind, Message) else _FDP.TYPE_ENUM
        proto.type_name = scopes[id(kind)]
    elif isinstance(kind, descriptor.EnumDescriptor):
        proto.type, proto.type_name = _FDP.TYPE_ENUM, "." + kind.full_name
    elif isinstance(kind, type) and issubclass(kind, message.Message):
        proto.type, proto.type_name = _FDP.TYPE_MESSAGE, "." + kind.DESCRIPTOR.full_name
    else:
        raise PluginError(f"field '{where}': type {kind!r} is neither a scalar type name, a Message, an Enum "
                          f"nor a protobuf message class")
    if field.packed:
        if not field.repeated or proto.type in (_FDP.TYPE_STRING, _FDP.TYPE_BYTES, _FDP.TYPE_MESSAGE):
            raise PluginError(f"field '{where}': only repeated numeric or enum fields can be packed")
        proto.options.packed = True
    if field.default is not None:
        if field.repeated or proto.type == _FDP.TYPE_MESSAGE:
            raise PluginError(f"field '{where}': repeated and message fields take no default")
        proto.default_value = _default_text(field, kind, where)
    return proto


def dependencies_of(types: Sequence[FieldType]) -> list[str]:
    """The .proto files that message classes and enums used as field types live in."""
    files = []
    for kind in types:
        if isinstance(kind, descriptor.EnumDescriptor):
            files.append(kind.file.name)
        elif isinstance(kind, type) and issubclass(kind, message.Message):
            files.append(kind.DESCRIPTOR.file.name)
    return sorted(set(files))


def _default_text(field: Field, kind: FieldType, where: str) -> str:
    value = field.default
    if not isinstance(kind, str):
        # Not a message: field_proto rejected a default of a message field.
        enum = cast("Enum | descriptor.EnumDescriptor", kind)
        names = dict(enum.values) if isinstance(enum, Enum) else {v.name: v.number for v in enum.values}
        if value not in names:
            raise PluginError(f"field '{where}': default {value!r} is not one of {', '.join(names)}")
        return value
    if kind == "bool":
        valid = isinstance(value, bool)
    elif kind in ("string", "bytes"):
        valid = isinstance(value, str)
    elif kind in _INTEGER_TYPES:
        valid = isinstance(value, int) and not isinstance(value, bool)
    else:
        valid = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not valid:
        raise PluginError(f"field '{where}': default {value!r} does not suit type {kind}")
    if kind == "bool":
        return "true" if value else "false"
    return repr(float(value)) if kind in ("float", "double") else str(value)


def _check_name(name: str, what: str) -> None:
    if not _IDENTIFIER.match(name) or keyword.iskeyword(name):
        raise PluginError(f"{what}: '{name}' is not a valid identifier")


def _add_enum(proto: descriptor_pb2.EnumDescriptorProto, enum: Enum) -> None:
    _check_name(enum.name, f"enum '{enum.name}'")
    if not enum.values:
        raise PluginError(f"enum '{enum.name}' has no values")
    proto.name = enum.name
    for name, number in enum.values.items():
        _check_name(name, f"value '{name}' of enum '{enum.name}'")
        proto.value.add(name=name, number=number)


def _add_message(file_proto: descriptor_pb2.FileDescriptorProto, declared: Message,
                 scopes: Mapping[int, str]) -> None:
    _check_name(declared.name, f"message '{declared.name}'")
    proto = file_proto.message_type.add(name=declared.name)
    for enum in declared.enums:
        _add_enum(proto.enum_type.add(), enum)
    names: set[str] = set()
    numbers: dict[int, str] = {}
    for field in declared.fields:
        if field.name in names:
            raise PluginError(f"message '{declared.name}' declares field '{field.name}' twice")
        if field.number in numbers:
            raise PluginError(f"message '{declared.name}': fields '{numbers[field.number]}' and "
                              f"'{field.name}' both use number {field.number}")
        names.add(field.name)
        numbers[field.number] = field.name
        proto.field.append(field_proto(field, scopes, declared.name))
    for dependency in dependencies_of([f.type for f in declared.fields]):
        if dependency not in file_proto.dependency:
            file_proto.dependency.append(dependency)
