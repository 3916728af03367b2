"""Finding the ONNX converter of a layer among those the installed packs give."""

from __future__ import annotations

from collections.abc import Callable

from caffe_core import plugins, registry
from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer

Converter = Callable[..., None]


class ConverterTable:
    """Every plugin's converters, read once per export, and the rule that picks one for a layer."""

    def __init__(self) -> None:
        self._by_distribution = plugins.collect_each("caffe_onnx_converters")

    def find(self, layer: Layer) -> Converter:
        """The providing distribution's converter for the layer's class, else the one other that has one."""
        type_name = layer.layer_param.type
        provider = _provider_of(layer)
        key = provider.entry_point.name if provider else type_name
        if provider is not None:
            for distribution, converters in self._by_distribution:
                if distribution == provider.distribution and key in converters:
                    return converters[key]
        offered = [(distribution, converters[key]) for distribution, converters in self._by_distribution
                   if key in converters]
        if len(offered) == 1:
            return offered[0][1]
        source = f" (class from {provider.label})" if provider else ""
        if offered:
            raise OnnxExportError(
                f"layer '{layer.name}' of type '{type_name}'{source}: converters for '{key}' are given by "
                f"{', '.join(d for d, _ in offered)}; uninstall all but one of them")
        hint = "" if layer.layer_param.bottom else (
            " (a layer with no bottoms reads its own data: export the deploy net, with Input layers)")
        raise OnnxExportError(
            f"layer '{layer.name}' of type '{type_name}'{source} has no ONNX export: no installed pack gives "
            f"a converter for '{key}'{hint}")


def _provider_of(layer: Layer) -> registry.Provider | None:
    cls = type(layer)
    target = f"{cls.__module__}:{cls.__qualname__}"
    for provider in registry.providers_of(layer.layer_param.type):
        if provider.entry_point.value == target:
            return provider
    return None
