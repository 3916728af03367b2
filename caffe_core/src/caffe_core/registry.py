"""The layer factory: layer types found lazily through `caffe.layers` entry points.

Listing types reads only distribution metadata; building a net imports just the modules of the
types it uses. When two distributions claim one type, the error names both; choose one with
`prefer_provider(type, distribution)` or the environment variable
`CAFFE_LAYER_PROVIDERS="Type=distribution,Other=distribution"`.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import os
from typing import TYPE_CHECKING

import importlib_metadata

from caffe_core.entry_points import entry_points_of
from caffe_core.errors import PluginError, UnknownLayerTypeError
from caffe_core.proto import caffe_pb2

if TYPE_CHECKING:
    from caffe_core.layer import Layer

LAYER_GROUP = "caffe.layers"
PROVIDERS_ENV = "CAFFE_LAYER_PROVIDERS"

_runtime_layers: dict[str, type] = {}
_preferred: dict[str, str] = {}


@dataclasses.dataclass(frozen=True)
class PackInfo:
    """An installed distribution that provides layer types."""

    distribution: str
    version: str
    layer_types: tuple[str, ...]


@functools.cache
def _providers() -> dict[str, tuple[importlib_metadata.EntryPoint, ...]]:
    found: dict[str, list[importlib_metadata.EntryPoint]] = {}
    for ep in entry_points_of(LAYER_GROUP):
        found.setdefault(ep.name, [])
        if all(_dist_name(ep) != _dist_name(other) for other in found[ep.name]):
            found[ep.name].append(ep)
    return {name: tuple(eps) for name, eps in found.items()}


def _dist_name(ep: importlib_metadata.EntryPoint) -> str:
    return ep.dist.name if ep.dist is not None else "<unknown distribution>"


def _env_preferences() -> dict[str, str]:
    pairs = [item.split("=", 1) for item in os.environ.get(PROVIDERS_ENV, "").split(",") if "=" in item]
    return {kind.strip(): dist.strip() for kind, dist in pairs}


def layer_types() -> list[str]:
    """Every registered layer type name, sorted; imports no pack."""
    return sorted(set(_providers()) | set(_runtime_layers))


def register_layer(type_name: str, cls: type) -> None:
    """Registers a layer class at run time (scripts, notebooks, tests)."""
    _runtime_layers[type_name] = cls
    layer_class.cache_clear()


def unregister_layer(type_name: str) -> None:
    """Removes a run-time registration."""
    _runtime_layers.pop(type_name, None)
    layer_class.cache_clear()


def prefer_provider(type_name: str, distribution: str) -> None:
    """Chooses which distribution provides a layer type that several distributions claim."""
    _preferred[type_name] = distribution
    layer_class.cache_clear()


def _choose(type_name: str, eps: tuple[importlib_metadata.EntryPoint, ...]) -> importlib_metadata.EntryPoint:
    if len(eps) == 1:
        return eps[0]
    wanted = _preferred.get(type_name) or _env_preferences().get(type_name)
    names = [_dist_name(ep) for ep in eps]
    if wanted is None:
        raise PluginError(
            f"layer type '{type_name}' is provided by several distributions: {', '.join(names)}. "
            f"Choose one with caffe_core.registry.prefer_provider('{type_name}', '<distribution>') or "
            f"{PROVIDERS_ENV}='{type_name}=<distribution>', or uninstall one of them."
        )
    for ep in eps:
        if _dist_name(ep) == wanted:
            return ep
    raise PluginError(f"{PROVIDERS_ENV} asks for '{wanted}' to provide layer type '{type_name}', "
                      f"but only {', '.join(names)} provide it")


@functools.cache
def layer_class(type_name: str) -> type[Layer]:
    """The class of a layer type, importing only the module that defines it."""
    if type_name in _runtime_layers:
        return _runtime_layers[type_name]
    providers = _providers()
    if type_name not in providers:
        known = layer_types()
        close = difflib.get_close_matches(type_name, known, n=1, cutoff=0.6)
        if not close:
            close = [k for k in known if k.lower() == type_name.lower()]
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise UnknownLayerTypeError(
            f"Unknown layer type: {type_name} (known types: {', '.join(known)}).{hint}"
        )
    ep = _choose(type_name, providers[type_name])
    try:
        return ep.load()
    except Exception as err:
        dist = _dist_name(ep)
        raise PluginError(
            f"layer type '{type_name}' from distribution '{dist}' failed to import ({ep.value}): "
            f"{type(err).__name__}: {err}"
        ) from err


def create_layer(param: caffe_pb2.LayerParameter) -> Layer:
    """Instantiates the layer a LayerParameter describes."""
    return layer_class(param.type)(param)


def installed_packs() -> list[PackInfo]:
    """Every distribution providing layer types, with its version and types."""
    by_dist: dict[str, tuple[str, list[str]]] = {}
    for name, eps in _providers().items():
        for ep in eps:
            version = ep.dist.version if ep.dist is not None else "?"
            by_dist.setdefault(_dist_name(ep), (version, []))[1].append(name)
    return [PackInfo(dist, version, tuple(sorted(types)))
            for dist, (version, types) in sorted(by_dist.items())]
