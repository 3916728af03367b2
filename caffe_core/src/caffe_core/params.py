"""Layer parameter blocks declared by packs (`zzz_param { ... }`), as extensions of LayerParameter.

A pack's plugin returns `{"zzz_param": ParamBlock(ZZZParameter, 1234)}` from `caffe_param_blocks`,
where ZZZParameter is a message of the pack's own .proto (which need not import ours). The core
declares the extension field at run time, so the block parses from text, validates against the
pack's schema, and survives a round trip through a binary .caffemodel.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool

from caffe_core.errors import PluginError
from caffe_core.proto import caffe_pb2

EXTENSION_PACKAGE = "caffe_core.ext"
MIN_FIELD_NUMBER = 1000


@dataclasses.dataclass(frozen=True)
class ParamBlock:
    """A pack's parameter message and the LayerParameter field number it takes."""

    message: Any
    number: int


@functools.cache
def param_blocks() -> dict[str, descriptor.FieldDescriptor]:
    """Every installed parameter block as an extension FieldDescriptor, by field name."""
    from caffe_core.plugins import collect

    blocks = collect("caffe_param_blocks")
    numbers: dict[int, str] = {}
    result = {}
    for name, block in sorted(blocks.items()):
        if name in caffe_pb2.LayerParameter.DESCRIPTOR.fields_by_name:
            raise PluginError(f"parameter block '{name}' clashes with a field of Caffe's LayerParameter")
        if block.number < MIN_FIELD_NUMBER:
            raise PluginError(f"parameter block '{name}' uses field number {block.number}; "
                              f"packs must use numbers >= {MIN_FIELD_NUMBER}")
        if block.number in numbers:
            raise PluginError(f"parameter blocks '{numbers[block.number]}' and '{name}' both use "
                              f"field number {block.number}")
        numbers[block.number] = name
        result[name] = _declare_extension(name, block)
    return result


def _declare_extension(name: str, block: ParamBlock) -> descriptor.FieldDescriptor:
    pool = descriptor_pool.Default()
    full_name = f"{EXTENSION_PACKAGE}.{name}"
    try:
        return pool.FindExtensionByName(full_name)
    except KeyError:
        pass
    message_descriptor = block.message.DESCRIPTOR
    file_proto = descriptor_pb2.FileDescriptorProto(
        name=f"caffe_core_ext/{name}.proto",
        package=EXTENSION_PACKAGE,
        dependency=[caffe_pb2.DESCRIPTOR.name, message_descriptor.file.name],
        syntax="proto2",
    )
    file_proto.extension.add(
        name=name,
        number=block.number,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
        type_name="." + message_descriptor.full_name,
        extendee="." + caffe_pb2.LayerParameter.DESCRIPTOR.full_name,
    )
    pool.Add(file_proto)
    return pool.FindExtensionByName(full_name)


def get_param_block(layer_param: caffe_pb2.LayerParameter, name: str) -> Any:
    """A pack's parameter message inside a LayerParameter (its defaults when unset)."""
    return layer_param.Extensions[param_blocks()[name]]
