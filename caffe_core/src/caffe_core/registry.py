"""The layer factory: layer types found lazily through `caffe.layers` entry points.

Listing types reads only distribution metadata; building a net imports just the modules of the
types it uses. An entry point's name is the layer type, optionally with a variant in brackets
(`Upsample[nearest]`), so one distribution may give a type several classes.

When several classes claim one type (two Caffe forks defined it differently), the factory asks each
class's `accepts(layer_param)` (or, when the net's other layers tell which fork the net comes from,
`accepts_in_net(layer_param, net_layers)`): the one class that answers True wins; failing that, the one
class with no opinion (None, the default). Otherwise the error names the candidates; choose one with
`prefer_provider(type, "distribution")` (or `"distribution[variant]"`) or the environment variable
`CAFFE_LAYER_PROVIDERS="Type=distribution,Other=distribution[variant]"`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import importlib_metadata

from caffe_core.entry_points import entry_points_of
from caffe_core.errors import PluginError, UnknownLayerTypeError
from caffe_core.proto import caffe_pb2

if TYPE_CHECKING:
    from caffe_core.layer import Layer

LAYER_GROUP = "caffe.layers"
PROVIDERS_ENV = "CAFFE_LAYER_PROVIDERS"
_ENTRY_NAME = re.compile(r"(?P<type>[^\[\]]+?)(?:\[(?P<variant>[^\[\]]+)\])?\Z")

_runtime_layers: dict[str, type] = {}
_preferred: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class Provider:
    """One class claiming a layer type: its distribution, its variant name ('' if none) and entry point."""

    type_name: str
    distribution: str
    variant: str
    entry_point: importlib_metadata.EntryPoint

    @property
    def label(self) -> str:
        """How preferences and messages name it: `distribution` or `distribution[variant]`."""
        return f"{self.distribution}[{self.variant}]" if self.variant else self.distribution


@dataclasses.dataclass(frozen=True)
class PackInfo:
    """An installed distribution that provides layer types (with the variants of each, if any)."""

    distribution: str
    version: str
    layer_types: tuple[str, ...]
    variants: dict[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)


@functools.cache
def _providers() -> dict[str, tuple[Provider, ...]]:
    found: dict[str, list[Provider]] = {}
    for ep in entry_points_of(LAYER_GROUP):
        parts = _ENTRY_NAME.match(ep.name)
        if parts is None:
            raise PluginError(f"entry point '{ep.name}' of '{_dist_name(ep)}' in group {LAYER_GROUP} is not "
                              f"'Type' or 'Type[variant]'")
        provider = Provider(parts["type"].strip(), _dist_name(ep), (parts["variant"] or "").strip(), ep)
        same = found.setdefault(provider.type_name, [])
        if all(provider.label != other.label for other in same):
            same.append(provider)
    return {name: tuple(providers) for name, providers in found.items()}


def _dist_name(ep: importlib_metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "<unknown distribution>"


def _env_preferences() -> dict[str, str]:
    pairs = [item.split("=", 1) for item in os.environ.get(PROVIDERS_ENV, "").split(",") if "=" in item]
    return {kind.strip(): dist.strip() for kind, dist in pairs}


def layer_types() -> list[str]:
    """Every registered layer type name, sorted; imports no pack."""
    return sorted(set(_providers()) | set(_runtime_layers))


def providers_of(type_name: str) -> tuple[Provider, ...]:
    """Every installed class claiming a layer type; imports nothing."""
    return _providers().get(type_name, ())


def register_layer(type_name: str, cls: type) -> None:
    """Registers a layer class at run time (scripts, notebooks, tests)."""
    _runtime_layers[type_name] = cls
    layer_class.cache_clear()


def unregister_layer(type_name: str) -> None:
    """Removes a run-time registration."""
    _runtime_layers.pop(type_name, None)
    layer_class.cache_clear()


def prefer_provider(type_name: str, distribution: str) -> None:
    """Chooses the distribution (or `distribution[variant]`) that provides a type several claim."""
    _preferred[type_name] = distribution
    layer_class.cache_clear()


def candidates(type_name: str) -> tuple[Provider, ...]:
    """The providers of a type that the user's preference leaves (all of them without one)."""
    providers = _providers().get(type_name)
    if providers is None:
        known = layer_types()
        close = difflib.get_close_matches(type_name, known, n=1, cutoff=0.6)
        if not close:
            close = [k for k in known if k.lower() == type_name.lower()]
        hint = f" Did you mean '{close[0]}'?" if close else ""
        from caffe_core.pack_index import install_hint

        raise UnknownLayerTypeError(
            f"Unknown layer type: {type_name} (known types: {', '.join(known)}).{hint} A type of a Caffe "
            f"fork needs the layer pack that provides it{install_hint('layer_types', type_name)} "
            f"(caffe-packs lists the installed packs)."
        )
    wanted = _preferred.get(type_name) or _env_preferences().get(type_name)
    if wanted is None or len(providers) == 1:
        return providers
    chosen = tuple(p for p in providers if wanted in (p.label, p.distribution))
    if not chosen:
        raise PluginError(f"{PROVIDERS_ENV} asks for '{wanted}' to provide layer type '{type_name}', "
                          f"but only {', '.join(p.label for p in providers)} provide it")
    return chosen


def _several(type_name: str, providers: tuple[Provider, ...], why: str) -> PluginError:
    labels = ", ".join(p.label for p in providers)
    return PluginError(
        f"layer type '{type_name}' is provided by several distributions: {labels}{why}. "
        f"Choose one with caffe_core.registry.prefer_provider('{type_name}', '<distribution>') or "
        f"{PROVIDERS_ENV}='{type_name}=<distribution>', or uninstall one of them."
    )


def _load(provider: Provider) -> type[Layer]:
    try:
        return provider.entry_point.load()
    except Exception as err:
        raise PluginError(
            f"layer type '{provider.type_name}' from distribution '{provider.distribution}' failed to import "
            f"({provider.entry_point.value}): {type(err).__name__}: {err}"
        ) from err


@functools.cache
def layer_class(type_name: str) -> type[Layer]:
    """The class of a layer type that one class provides, importing only the module that defines it."""
    if type_name in _runtime_layers:
        return _runtime_layers[type_name]
    providers = candidates(type_name)
    if len(providers) > 1:
        raise _several(type_name, providers, " (which one depends on the layer: use layer_class_for)")
    return _load(providers[0])


def provider_classes(type_name: str) -> list[type[Layer]]:
    """Every class the chosen providers of a type give (one per variant), each imported."""
    return [_load(provider) for provider in candidates(type_name)]


def layer_class_for(param: caffe_pb2.LayerParameter,
                    net: Sequence[caffe_pb2.LayerParameter] = ()) -> type[Layer]:
    """The class that builds this layer of the net `net` lists (else the layer alone): the one taking it."""
    if param.type in _runtime_layers:
        return _runtime_layers[param.type]
    providers = candidates(param.type)
    if len(providers) == 1:
        return _load(providers[0])
    classes = [(provider, _load(provider)) for provider in providers]
    verdicts = [(provider, cls, _accepts(cls, param, net or (param,))) for provider, cls in classes]
    for verdict in (True, None):
        chosen = [(provider, cls) for provider, cls, answer in verdicts if answer is verdict]
        if len(chosen) == 1:
            return chosen[0][1]
        if chosen:
            raise _several(param.type, tuple(p for p, _ in chosen),
                           f" and each of them takes layer '{param.name}'")
    reasons = "; ".join(f"{provider.label} takes {what_it_takes(cls)}" for provider, cls in classes)
    raise PluginError(f"no provider of layer type '{param.type}' takes layer '{param.name}': {reasons}")


def _accepts(cls: type[Layer], param: caffe_pb2.LayerParameter,
             net: Sequence[caffe_pb2.LayerParameter]) -> bool | None:
    accepts_in_net = getattr(cls, "accepts_in_net", None)
    return None if accepts_in_net is None else accepts_in_net(param, net)


def _overrides(cls: type[Layer], method: str) -> bool:
    from caffe_core.layer import Layer

    own = getattr(cls, method, None)
    return own is not None and getattr(own, "__func__", None) is not vars(Layer)[method].__func__


def says_which_layers(cls: type[Layer]) -> bool:
    """Whether a layer class overrides `accepts` or `accepts_in_net` (says which layers are its own)."""
    return _overrides(cls, "accepts") or _overrides(cls, "accepts_in_net")


def what_it_takes(cls: type[Layer]) -> str:
    """The first line of the docstring of a class's `accepts` (or `accepts_in_net`), or 'any layer'."""
    if not says_which_layers(cls):
        return "any layer"
    method = cls.accepts_in_net if _overrides(cls, "accepts_in_net") else cls.accepts
    lines = (method.__doc__ or "").strip().splitlines()
    return lines[0].rstrip(".") if lines else f"what {cls.__name__}.{method.__name__} says"


def create_layer(param: caffe_pb2.LayerParameter, net: Sequence[caffe_pb2.LayerParameter] = ()) -> Layer:
    """Instantiates the layer a LayerParameter describes (`net`: the layers of the net it belongs to)."""
    return layer_class_for(param, net)(param)


def installed_packs() -> list[PackInfo]:
    """Every distribution providing layer types, with its version, types and their variants."""
    by_dist: dict[str, tuple[str, dict[str, list[str]]]] = {}
    for name, providers in _providers().items():
        for provider in providers:
            ep = provider.entry_point
            version = ep.dist.version if ep.dist is not None else "?"
            types = by_dist.setdefault(provider.distribution, (version, {}))[1]
            variants = types.setdefault(name, [])
            if provider.variant:
                variants.append(provider.variant)
    return [PackInfo(dist, version, tuple(sorted(types)),
                     {name: tuple(sorted(v)) for name, v in sorted(types.items()) if v})
            for dist, (version, types) in sorted(by_dist.items())]
