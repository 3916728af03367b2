"""pycaffe's net specification: write nets in Python with `L.<Type>(...)` and `NetSpec`.

`layers` (L) and `params` (P) are pseudo-modules: `L.Convolution(bottom, kernel_size=3)` gives a Top;
`P.Pooling.MAX` gives the enum value. Keyword arguments ending in `param` go onto the LayerParameter
(`param=[dict(lr_mult=1)]`, `transform_param=dict(...)`); the others go into the type's own block
(`Convolution` -> `convolution_param`, a pack's `ZZZ` -> its `zzz_param`) and otherwise onto the
LayerParameter. Lists become repeated fields, dicts sub-messages. Unnamed tops are named `<Type><n>`.
"""

from __future__ import annotations

import functools
from collections import Counter, OrderedDict
from typing import Any

from google.protobuf import descriptor, message_factory, text_format
from google.protobuf.message import Message

from caffe import legacy_text
from caffe.proto import caffe_pb2
from caffe_core.descriptor_types import MessageDescriptor
from caffe_core.schema_extensions import (
    FieldAlias,
    get_extra_field,
    get_param_block,
    message_fields,
    param_blocks,
    set_extra_field,
)

# Scripts save specs with str(net.to_proto()); print them character for character as BVLC's pycaffe did.
legacy_text.install(caffe_pb2.DESCRIPTOR)

_PARAMETER_SUFFIX = "Parameter"
# Types whose parameters live in another type's block. BVLC's NetSpec knew none of these, so there
# `L.Deconvolution(num_output=...)` failed and only `convolution_param=dict(...)` worked; both work here.
SHARED_BLOCKS = {"Deconvolution": "convolution", "Im2col": "convolution", "SoftmaxWithLoss": "softmax",
                 "RNN": "recurrent", "LSTM": "recurrent"}


def _block_type_name(message: MessageDescriptor) -> str:
    return message.name.removesuffix(_PARAMETER_SUFFIX)


def param_name_dict() -> dict[str, str]:
    """Layer type name -> the prefix of its `<prefix>_param` block, from the schema and installed packs."""
    return dict(_param_names())


@functools.cache
def _param_names() -> dict[str, str]:
    fields = [f for f in caffe_pb2.LayerParameter.DESCRIPTOR.fields if f.name.endswith("_param")]
    names = {_block_type_name(f.message_type): f.name.removesuffix("_param") for f in fields
             if f.message_type is not None}
    for name, field in param_blocks().items():
        if field.message_type is not None:
            names.setdefault(_block_type_name(field.message_type), name.removesuffix("_param"))
    for type_name, prefix in SHARED_BLOCKS.items():
        names.setdefault(type_name, prefix)
    return names


def _field(proto: Message, name: str) -> Any:
    """A field of proto by name; pack blocks and fields packs add to Caffe's messages are extensions."""
    if name not in proto.DESCRIPTOR.fields_by_name:
        if isinstance(proto, caffe_pb2.LayerParameter):
            if name in param_blocks():
                return get_param_block(proto, name)
        elif isinstance(message_fields().get((proto.DESCRIPTOR.name, name)), descriptor.FieldDescriptor):
            return get_extra_field(proto, name)
    try:
        return getattr(proto, name)
    except AttributeError:
        raise AttributeError(f"{proto.DESCRIPTOR.name} has no field '{name}'") from None


def _has_field(proto: Message, name: str) -> bool:
    if isinstance(proto, caffe_pb2.LayerParameter) and name in param_blocks():
        return True
    return name in proto.DESCRIPTOR.fields_by_name or (proto.DESCRIPTOR.name, name) in message_fields()


def assign_proto(proto: Message, name: str, val: Any) -> None:
    """Assigns a Python value to field `name` of proto: lists to repeated fields, dicts to messages."""
    alias = message_fields().get((proto.DESCRIPTOR.name, name))
    if isinstance(alias, FieldAlias) and name not in proto.DESCRIPTOR.fields_by_name:
        replacement = alias.replacement(str(val))
        if replacement is None:
            choices = " or ".join(alias.rewrites)
            raise ValueError(f"{proto.DESCRIPTOR.name}.{name} takes {choices}, got {val!r}")
        text_format.Merge(replacement, proto)
        return
    target = _field(proto, name)
    is_repeated = hasattr(target, "extend")
    if is_repeated and not isinstance(val, list | tuple):
        val = [val]
    if isinstance(val, list | tuple):
        if val and isinstance(val[0], dict):
            for item in val:
                sub = target.add()
                for key, value in item.items():
                    assign_proto(sub, key, value)
        else:
            target.extend(val)
    elif isinstance(val, dict):
        for key, value in val.items():
            assign_proto(target, key, value)
    elif isinstance(target, Message):
        raise TypeError(f"{proto.DESCRIPTOR.name}.{name} is a message; give it a dict, not {val!r}")
    elif name in proto.DESCRIPTOR.fields_by_name:
        setattr(proto, name, val)
    else:
        set_extra_field(proto, name, val)


class Top:
    """One output blob of a layer (a Function); layers take Tops as bottoms."""

    def __init__(self, fn: Function, n: int) -> None:
        self.fn = fn
        self.n = n

    def to_proto(self) -> caffe_pb2.NetParameter:
        """A NetParameter with every layer needed to compute this top."""
        return to_proto(self)

    def _update(self, params: dict[str, Any]) -> None:
        self.fn._update(params)

    def _to_proto(self, layers: OrderedDict, names: dict, autonames: Counter) -> None:
        self.fn._to_proto(layers, names, autonames)


class Function:
    """A layer: its type, its bottoms (Tops) and its parameters."""

    def __init__(self, type_name: str, inputs: tuple, params: dict[str, Any]) -> None:
        self.type_name = type_name
        for index, bottom in enumerate(inputs):
            if not isinstance(bottom, Top):
                raise TypeError(f"{type_name} input {index} is not a Top (type is {type(bottom)})")
        self.inputs = inputs
        self.params = params
        self.ntop = self.params.pop("ntop", 1)
        self.in_place = self.params.pop("in_place", False)
        self.tops = tuple(Top(self, n) for n in range(self.ntop))

    def _get_name(self, names: dict, autonames: Counter) -> str:
        if self not in names and self.ntop > 0:
            names[self] = self._get_top_name(self.tops[0], names, autonames)
        elif self not in names:
            autonames[self.type_name] += 1
            names[self] = self.type_name + str(autonames[self.type_name])
        return names[self]

    def _get_top_name(self, top: Top, names: dict, autonames: Counter) -> str:
        if top not in names:
            autonames[top.fn.type_name] += 1
            names[top] = top.fn.type_name + str(autonames[top.fn.type_name])
        return names[top]

    def _update(self, params: dict[str, Any]) -> None:
        self.params.update(params)

    def _assign_param(self, layer: caffe_pb2.LayerParameter, key: str, value: Any) -> None:
        if key.endswith("param"):
            assign_proto(layer, key, value)
            return
        prefix = _param_names().get(self.type_name)
        block_name = f"{prefix}_param" if prefix is not None else None
        if block_name is not None:
            block = _field(layer, block_name)
            if _has_field(block, key):
                assign_proto(block, key, value)
                return
        if _has_field(layer, key):
            assign_proto(layer, key, value)
            return
        where = f"{block_name} nor of LayerParameter" if block_name else "LayerParameter"
        raise AttributeError(f"L.{self.type_name}: '{key}' is not a field of {where}")

    def _to_proto(self, layers: OrderedDict, names: dict, autonames: Counter) -> None:
        if self in layers:
            return
        bottom_names = []
        for bottom in self.inputs:
            bottom._to_proto(layers, names, autonames)
            bottom_names.append(layers[bottom.fn].top[bottom.n])
        layer = caffe_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottom_names)
        if self.in_place:
            layer.top.extend(layer.bottom)
        else:
            for top in self.tops:
                layer.top.append(self._get_top_name(top, names, autonames))
        layer.name = self._get_name(names, autonames)
        for key, value in self.params.items():
            self._assign_param(layer, key, value)
        layers[self] = layer


def to_proto(*tops: Top | Function) -> caffe_pb2.NetParameter:
    """A NetParameter with every layer needed for the given tops (or top-less layers), names generated."""
    layers: OrderedDict = OrderedDict()
    autonames: Counter = Counter()
    for top in tops:
        top._to_proto(layers, {}, autonames)
    net = caffe_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


class NetSpec:
    """Tops assigned as attributes; to_proto names each layer and top after its attribute."""

    tops: OrderedDict[str, Top | Function]

    def __init__(self) -> None:
        super().__setattr__("tops", OrderedDict())

    def __setattr__(self, name: str, value: Top | Function) -> None:
        self.tops[name] = value

    def __getattr__(self, name: str) -> Top | Function:
        try:
            return self.tops[name]
        except KeyError:
            raise AttributeError(f"NetSpec has no top named '{name}'") from None

    def __setitem__(self, key: str, value: Top | Function) -> None:
        self.tops[key] = value

    def __getitem__(self, item: str) -> Top | Function:
        return self.tops[item]

    def __delitem__(self, name: str) -> None:
        del self.tops[name]

    def keys(self) -> list[str]:
        """The assigned names, in order."""
        return list(self.tops.keys())

    def vals(self) -> list[Top | Function]:
        """The assigned tops, in order."""
        return list(self.tops.values())

    def update(self, name: str, params: dict[str, Any]) -> None:
        """Adds or replaces parameters of the layer behind a named top."""
        self.tops[name]._update(params)

    def to_proto(self) -> caffe_pb2.NetParameter:
        """A NetParameter with every layer needed for the assigned tops."""
        names = {value: key for key, value in self.tops.items()}
        autonames: Counter = Counter()
        layers: OrderedDict = OrderedDict()
        for top in self.tops.values():
            top._to_proto(layers, names, autonames)
        net = caffe_pb2.NetParameter()
        net.layer.extend(layers.values())
        return net


class Layers:
    """Pseudo-module: `layers.<Type>(*bottoms, **params)` specifies a layer."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def layer_fn(*args: Top, **kwargs: Any) -> Top | tuple[Top, ...] | Function:
            fn = Function(name, args, kwargs)
            if fn.ntop == 0:
                return fn
            if fn.ntop == 1:
                return fn.tops[0]
            return fn.tops

        return layer_fn


class _ParameterConstants:
    """Enum values of one parameter message (`params.Pooling` -> PoolingParameter's constants)."""

    def __init__(self, type_name: str, message_class: type[Message]) -> None:
        self._type_name = type_name
        self._message_class = message_class

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._message_class, name)
        except AttributeError:
            raise AttributeError(f"{self._type_name}Parameter has no constant '{name}'") from None


class Parameters:
    """Pseudo-module: `params.Pooling.MAX` is the value used in layer parameters."""

    def __getattr__(self, name: str) -> _ParameterConstants:
        if name.startswith("__"):
            raise AttributeError(name)
        message_name = name + _PARAMETER_SUFFIX
        message_class = getattr(caffe_pb2, message_name, None)
        if message_class is None:
            for field in param_blocks().values():
                if field.message_type is not None and field.message_type.name == message_name:
                    message_class = message_factory.GetMessageClass(field.message_type)
        if message_class is None:
            raise AttributeError(f"no parameter message {message_name} in Caffe's schema or installed packs")
        return _ParameterConstants(name, message_class)


layers = Layers()
params = Parameters()
