"""The pluggy plugin manager: loads `caffe.plugins` entry points on first use and merges hook results.

The core's own hooks (`caffe_core.builtin_plugin`) come in through caffe-core's entry point like any pack's.
Whatever caches a hook's results keys them on `generation()`, which changes whenever a plugin is registered
or unregistered at run time.
"""

from __future__ import annotations

import functools
from typing import Any

import pluggy

from caffe_core import hookspecs
from caffe_core.entry_points import entry_points_of
from caffe_core.errors import PluginError

PLUGIN_GROUP = "caffe.plugins"
_generation = 0


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with every installed plugin (the core's own among them) registered."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    for ep in entry_points_of(PLUGIN_GROUP):
        dist = ep.dist.name if ep.dist else "?"
        try:
            module = ep.load()
        except Exception as err:
            raise PluginError(
                f"plugin '{ep.name}' of distribution '{dist}' failed to import ({ep.value}): "
                f"{type(err).__name__}: {err}"
            ) from err
        if manager.is_registered(module):
            continue
        manager.register(module, name=f"{dist}:{ep.name}")
    return manager


def collect(hook_name: str) -> dict[str, Any]:
    """Merges the dicts every plugin returns for a hook; a name given twice is an error naming both."""
    manager = plugin_manager()
    hook = getattr(manager.hook, hook_name)
    merged: dict[str, Any] = {}
    owner: dict[str, str] = {}
    for impl in reversed(hook.get_hookimpls()):
        result = impl.function()
        for name, value in (result or {}).items():
            if name in merged and merged[name] is not value:
                raise PluginError(f"{hook_name}: '{name}' is provided by both '{owner[name]}' and "
                                  f"'{impl.plugin_name}'; uninstall one of them")
            merged[name] = value
            owner[name] = impl.plugin_name
    return merged


def collect_each(hook_name: str) -> list[tuple[str, dict[str, Any]]]:
    """Each plugin's dict for a hook, with the distribution that provides the plugin."""
    hook = getattr(plugin_manager().hook, hook_name)
    return [(impl.plugin_name.split(":", 1)[0], impl.function() or {})
            for impl in reversed(hook.get_hookimpls())]


def generation() -> int:
    """A number that changes whenever the set of registered plugins does."""
    return _generation


def register_plugin(module: object, name: str | None = None) -> None:
    """Registers a plugin object at run time (for scripts and tests that define hooks inline)."""
    global _generation
    plugin_manager().register(module, name=name)
    _generation += 1


def unregister_plugin(plugin: object) -> None:
    """Removes a plugin registered at run time, given by its name or as the object itself."""
    global _generation
    if isinstance(plugin, str):
        plugin_manager().unregister(name=plugin)
    else:
        plugin_manager().unregister(plugin)
    _generation += 1
