"""What packs add to Caffe's schema: layer parameter blocks and fields of Caffe's own messages.

- A parameter block (`caffe_param_blocks`): `{"zzz_param": ParamBlock(ZZZParameter, 5000)}` makes a
  prototxt's `zzz_param { ... }` parse, validate against the pack's message and survive a .caffemodel.
  The number may be any LayerParameter field number BVLC leaves free (12-99, 149 and up), so a pack
  reproducing a Caffe fork uses that fork's number and its files stay binary-compatible with the fork.
- A message field (`caffe_message_fields`), keyed "Message.field":
  - `ExtraField(type, number, default)` adds the field to Caffe's message as an extension, at any
    number BVLC leaves free in that message (the fork's number): `dropout_param { scale_train: false }`;
  - `FieldAlias({"true": "round_mode: CEIL", ...})` says how a fork's field is written in Caffe's own
    fields, so `pooling_param { ceil_mode: true }` parses as `round_mode: CEIL` and the schema stays BVLC's.

Two installed packs claiming one block name, one field or one number is an error naming both; choose
one with `prefer_param_provider(name, distribution)` or `CAFFE_PARAM_PROVIDERS="name=distribution,..."`.
Extensions are declared in protobuf's default pool when first needed (before any file is parsed).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool
from google.protobuf import message as pb_message

from caffe_core import plugins
from caffe_core.descriptor_types import MessageDescriptor
from caffe_core.errors import PluginError
from caffe_core.messages import MAX_FIELD_NUMBER, Field, FieldType, dependencies_of, field_proto
from caffe_core.proto import caffe_pb2

if TYPE_CHECKING:
    # The stubs index Extensions (and take HasExtension) by this subclass, which only generated code
    # declares; the extensions here are declared at run time, in the default pool.
    from google.protobuf.internal.extension_dict import _ExtensionFieldDescriptor

log = logging.getLogger("caffe.schema_extensions")

EXTENSION_PACKAGE = "caffe_core.ext"
PROVIDERS_ENV = "CAFFE_PARAM_PROVIDERS"
_preferred: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class ParamBlock:
    """A pack's parameter message and the LayerParameter field number it takes."""

    message: type[pb_message.Message]
    number: int


@dataclasses.dataclass(frozen=True)
class ExtraField:
    """A field a pack adds to one of Caffe's messages: its type, number and default (as messages.Field)."""

    type: FieldType
    number: int
    default: Any = None
    repeated: bool = False
    packed: bool = False


# Text format's spellings of a bool value.
_BOOLEANS = {"true": "true", "True": "true", "t": "true", "1": "true",
             "false": "false", "False": "false", "f": "false", "0": "false"}


@dataclasses.dataclass(frozen=True)
class FieldAlias:
    """A fork's field written in Caffe's own fields: each value's text and the text that replaces it."""

    rewrites: Mapping[str, str]

    def replacement(self, value: str) -> str | None:
        """The Caffe fields that stand for a value's text (any spelling of a bool), None for another value."""
        key = _BOOLEANS.get(value, value) if set(self.rewrites) <= {"true", "false"} else value
        return self.rewrites.get(key)


@dataclasses.dataclass(frozen=True)
class SchemaAddition:
    """One block or field an installed distribution adds: its key, kind and field number (None: alias)."""

    distribution: str
    key: str
    kind: str
    number: int | None


# A problem: the distribution(s) at fault, then what is wrong.
Problem = tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class _Claim:
    key: str
    number: int | None
    value: Any
    distribution: str


def prefer_param_provider(name: str, distribution: str) -> None:
    """Chooses the distribution whose block (or "Message.field") wins when several packs claim it."""
    _preferred[name] = distribution


def _choices() -> tuple:
    """What the collected blocks and fields depend on besides the packs: the plugins and the preferences."""
    return plugins.generation(), tuple(sorted(_preferred.items())), os.environ.get(PROVIDERS_ENV, "")


def _wanted(key: str) -> str | None:
    pairs = [item.split("=", 1) for item in os.environ.get(PROVIDERS_ENV, "").split(",") if "=" in item]
    return _preferred.get(key) or {k.strip(): v.strip() for k, v in pairs}.get(key)


def _collect(hook: str) -> list[_Claim]:
    return [_Claim(key, getattr(value, "number", None), value, distribution)
            for distribution, result in plugins.collect_each(hook) for key, value in result.items()]


def _settle(claims: list[_Claim], what: str, scope: str = "") -> tuple[list[_Claim], list[Problem]]:
    """The claims a preference leaves, and one problem per clash left over (one key or one number)."""

    def clash(a: _Claim, b: _Claim) -> bool:
        if a.distribution == b.distribution or (a.key == b.key and a.value == b.value):
            return False
        return a.key == b.key or (a.number is not None and a.number == b.number)

    kept: list[_Claim] = []
    problems: list[Problem] = []
    for claim in claims:
        beaten_by = None
        for other in claims:
            if other is claim or not clash(claim, other):
                continue
            wanted = {_wanted(claim.key), _wanted(other.key)}
            if claim.distribution in wanted and other.distribution not in wanted:
                continue
            beaten_by = other
            if other.distribution in wanted:
                break
            first, second = sorted((claim, other), key=lambda c: c.distribution)
            same = f"{what} '{claim.key}'" if claim.key == other.key else \
                f"{what}s '{first.key}' and '{second.key}' (both number {claim.number}{scope})"
            problem = (f"{same} claimed by both '{first.distribution}' and '{second.distribution}'. Choose "
                       f"one with caffe_core.schema_extensions.prefer_param_provider('{first.key}', "
                       f"'<distribution>') or {PROVIDERS_ENV}='{first.key}=<distribution>', or uninstall one "
                       f"of them.")
            if (first.distribution, second.distribution, problem) not in problems:
                problems.append((first.distribution, second.distribution, problem))
        if beaten_by is None:
            kept.append(claim)
        elif not problems:
            log.info("%s '%s' of '%s' is not used: '%s' was chosen", what, claim.key, claim.distribution,
                     beaten_by.distribution)
    return kept, problems


def installed_additions() -> list[SchemaAddition]:
    """Every block and field the installed packs declare, whether or not a clash leaves it unused."""
    blocks = [SchemaAddition(c.distribution, c.key, "block", c.number)
              for c in _collect("caffe_param_blocks")]
    fields = [SchemaAddition(c.distribution, c.key, "alias" if isinstance(c.value, FieldAlias) else "field",
                             c.number) for c in _collect("caffe_message_fields")]
    return sorted(blocks + fields, key=lambda a: (a.distribution, a.kind != "block", a.key))


def _number_problem(where: str, message: MessageDescriptor, number: int) -> str | None:
    """Why a pack may not take this field number of one of Caffe's messages, if it may not."""
    if number in message.fields_by_number:
        taken = message.fields_by_number[number].name
        return f"{where} uses number {number}, which is Caffe's {message.name}.{taken}"
    if not any(start <= number < end for start, end in message.extension_ranges):
        free = ", ".join(f"{start}-{end - 1}" if end - 1 < MAX_FIELD_NUMBER else f"{start} and up"
                         for start, end in message.extension_ranges)
        return f"{where} uses number {number}; {message.name} leaves {free} free"
    return None


def _block_problem(claim: _Claim) -> str | None:
    """What is wrong with one declared block, if anything."""
    layer = caffe_pb2.LayerParameter.DESCRIPTOR
    where = f"parameter block '{claim.key}' of '{claim.distribution}'"
    if not isinstance(claim.value, ParamBlock):
        return f"{where} is a {type(claim.value).__name__}, not a ParamBlock"
    if claim.key in layer.fields_by_name:
        return f"{where} clashes with the field '{claim.key}' of Caffe's LayerParameter"
    return _number_problem(where, layer, claim.value.number)


def _field_problem(claim: _Claim) -> str | None:
    """What is wrong with one declared field of a Caffe message, if anything."""
    message_name, _, field_name = claim.key.partition(".")
    where = f"message field '{claim.key}' of '{claim.distribution}'"
    target = caffe_pb2.DESCRIPTOR.message_types_by_name.get(message_name)
    if target is None or not field_name:
        return f"{where}: the key must be 'Message.field' with one of Caffe's messages"
    if field_name in target.fields_by_name:
        return f"{where}: Caffe's {message_name} already has a field '{field_name}'"
    if isinstance(claim.value, FieldAlias):
        return None
    if not isinstance(claim.value, ExtraField):
        return f"{where} is a {type(claim.value).__name__}, not an ExtraField or a FieldAlias"
    return _number_problem(where, target, claim.value.number)


def _checked_blocks() -> tuple[list[_Claim], list[Problem]]:
    claims = _collect("caffe_param_blocks")
    problems: list[Problem] = [(c.distribution, problem) for c in claims if (problem := _block_problem(c))]
    if problems:
        return [], problems
    return _settle(claims, "parameter block")


def _checked_fields() -> tuple[list[_Claim], list[Problem]]:
    claims = _collect("caffe_message_fields")
    problems: list[Problem] = [(c.distribution, problem) for c in claims if (problem := _field_problem(c))]
    if problems:
        return [], problems
    kept: list[_Claim] = []
    for message_name in sorted({c.key.partition(".")[0] for c in claims}):
        group = [c for c in claims if c.key.partition(".")[0] == message_name]
        settled, clashes = _settle(group, "message field", f" of {message_name}")
        kept += settled
        problems += clashes
    return kept, problems


def schema_problems() -> list[Problem]:
    """Every problem of the installed blocks and fields (the distributions at fault, then the message)."""
    problems = _checked_blocks()[1] + _checked_fields()[1]
    if not problems:
        for declare in (param_blocks, message_fields):
            try:
                declare()
            except PluginError as err:
                problems.append(("?", str(err)))
    return problems


def param_blocks() -> dict[str, descriptor.FieldDescriptor]:
    """Every installed parameter block as an extension FieldDescriptor of LayerParameter, by name."""
    return _param_blocks_for(_choices())


def message_fields() -> dict[tuple[str, str], descriptor.FieldDescriptor | FieldAlias]:
    """Every installed field of Caffe's messages, by (message name, field name): extensions or aliases."""
    return _message_fields_for(_choices())


@functools.lru_cache(maxsize=1)
def _param_blocks_for(choices: tuple) -> dict[str, descriptor.FieldDescriptor]:
    kept, problems = _checked_blocks()
    if problems:
        raise PluginError(problems[0][-1])
    layer = caffe_pb2.DESCRIPTOR.message_types_by_name["LayerParameter"]
    return {claim.key: _declare(claim.key, EXTENSION_PACKAGE, layer, claim.value.number, claim.value.message,
                                claim.distribution) for claim in kept}


@functools.lru_cache(maxsize=1)
def _message_fields_for(choices: tuple) -> dict[tuple[str, str], descriptor.FieldDescriptor | FieldAlias]:
    kept, problems = _checked_fields()
    if problems:
        raise PluginError(problems[0][-1])
    fields: dict[tuple[str, str], descriptor.FieldDescriptor | FieldAlias] = {}
    for claim in kept:
        message_name, _, field_name = claim.key.partition(".")
        target = caffe_pb2.DESCRIPTOR.message_types_by_name[message_name]
        fields[(message_name, field_name)] = claim.value if isinstance(claim.value, FieldAlias) else \
            _declare(field_name, f"{EXTENSION_PACKAGE}.{message_name}", target, claim.value.number,
                     claim.value, claim.distribution)
    return fields


def _declare(name: str, package: str, extendee: descriptor.Descriptor, number: int,
             kind: ExtraField | FieldType, distribution: str) -> descriptor.FieldDescriptor:
    """Declares one extension in protobuf's default pool (once per process) and returns it."""
    pool = descriptor_pool.Default()
    full_name = f"{package}.{name}"
    try:
        existing = pool.FindExtensionByName(full_name)
    except KeyError:
        existing = None
    extra = kind if isinstance(kind, ExtraField) else ExtraField(kind, number)
    field = Field(name, extra.type, number, extra.default, extra.repeated, extra.packed)
    proto = field_proto(field, {}, f"{extendee.name}")
    try:
        taken = pool.FindExtensionByNumber(extendee, number)
    except KeyError:
        taken = None
    if existing is not taken or (existing is not None and existing.type != proto.type):
        holder = taken.full_name if taken is not None else full_name
        raise PluginError(f"{extendee.name} field {number} ('{holder}') was declared by another provider "
                          f"earlier in this process; start a new process to use '{name}' of '{distribution}'")
    if existing is not None:
        return existing
    proto.extendee = "." + extendee.full_name
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=f"caffe_core_ext/{full_name}.proto", package=package, syntax="proto2",
        dependency=sorted({caffe_pb2.DESCRIPTOR.name, *dependencies_of([extra.type])}))
    file_proto.extension.append(proto)
    try:
        pool.Add(file_proto)
    except TypeError as err:
        raise PluginError(f"'{name}' of '{distribution}' cannot be declared: {err}") from None
    return pool.FindExtensionByName(full_name)


def declare_all() -> None:
    """Declares every installed block and field, so a binary file parses with them (not as unknowns)."""
    param_blocks()
    message_fields()


def get_param_block(layer_param: caffe_pb2.LayerParameter, name: str) -> Any:
    """A pack's parameter message inside a LayerParameter (its defaults when unset)."""
    return layer_param.Extensions[_block(name)]


def has_param_block(layer_param: caffe_pb2.LayerParameter, name: str) -> bool:
    """Whether a LayerParameter sets a pack's parameter block."""
    return layer_param.HasExtension(_block(name))


def _block(name: str) -> _ExtensionFieldDescriptor[caffe_pb2.LayerParameter, Any]:
    blocks = param_blocks()
    if name not in blocks:
        raise PluginError(f"no installed pack declares the parameter block '{name}'")
    return cast("_ExtensionFieldDescriptor[caffe_pb2.LayerParameter, Any]", blocks[name])


def get_extra_field(message: pb_message.Message, name: str) -> Any:
    """The value of a field a pack added to one of Caffe's messages (its default when unset)."""
    return message.Extensions[_extension(message, name)]


def set_extra_field(message: pb_message.Message, name: str, value: object) -> None:
    """Sets a scalar field a pack added to one of Caffe's messages."""
    message.Extensions[_extension(message, name)] = value


def has_extra_field(message: pb_message.Message, name: str) -> bool:
    """Whether a field a pack added to one of Caffe's messages is set."""
    return message.HasExtension(_extension(message, name))


def _extension(message: pb_message.Message, name: str) -> _ExtensionFieldDescriptor[pb_message.Message, Any]:
    found = message_fields().get((message.DESCRIPTOR.name, name))
    if not isinstance(found, descriptor.FieldDescriptor):
        raise PluginError(f"no installed pack adds the field '{name}' to {message.DESCRIPTOR.name}")
    return cast("_ExtensionFieldDescriptor[pb_message.Message, Any]", found)
