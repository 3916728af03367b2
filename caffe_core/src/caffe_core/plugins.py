"""The pluggy plugin manager: loads `caffe.plugins` entry points on first use and merges hook results."""

from __future__ import annotations

import functools
from typing import Any

import pluggy

from caffe_core import hookspecs
from caffe_core.entry_points import entry_points_of
from caffe_core.errors import PluginError

PLUGIN_GROUP = "caffe.plugins"


@functools.cache
def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager, with the core's own plugin and every installed one registered."""
    manager = pluggy.PluginManager(hookspecs.PROJECT)
    manager.add_hookspecs(hookspecs)
    from caffe_core import builtin_plugin

    manager.register(builtin_plugin, name="caffe-core")
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


def register_plugin(module: Any, name: str | None = None) -> None:
    """Registers a plugin object at run time (for scripts and tests that define hooks inline)."""
    plugin_manager().register(module, name=name)
    refresh()


def unregister_plugin(name: str) -> None:
    """Removes a plugin registered at run time."""
    plugin_manager().unregister(name=name)
    refresh()


def refresh() -> None:
    """Forgets cached hook results so newly registered plugins are seen."""
    from caffe_core import fillers, params

    fillers.filler_types.cache_clear()
    params.refresh()
