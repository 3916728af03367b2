"""Checks what the installed layer packs declare: plugins and layer classes that import, classes that are
layers of the type they are registered as, types no net could choose between, and blocks and fields that
are valid and claimed once."""

from __future__ import annotations

import dataclasses

from caffe_core import registry, schema_extensions
from caffe_core.entry_points import entry_points_of
from caffe_core.layer import Layer
from caffe_core.plugins import PLUGIN_GROUP


@dataclasses.dataclass(frozen=True)
class Problem:
    """One problem: the distribution(s) at fault and what is wrong."""

    distributions: tuple[str, ...]
    message: str

    def __str__(self) -> str:
        return f"{', '.join(self.distributions)}: {self.message}"


def installed_pack_problems() -> list[Problem]:
    """Every problem of the installed packs, one per line's worth; empty when all is well."""
    problems = _plugin_problems()
    problems += _layer_problems()
    if not problems:
        problems += [Problem(tuple(p[:-1]), p[-1]) for p in schema_extensions.schema_problems()]
    return problems


def _plugin_problems() -> list[Problem]:
    problems = []
    for ep in entry_points_of(PLUGIN_GROUP):
        dist = ep.dist.name if ep.dist is not None else "?"
        try:
            ep.load()
        except Exception as err:
            problems.append(Problem((dist,), f"plugin '{ep.name}' ({ep.value}) failed to import: "
                                             f"{type(err).__name__}: {err}"))
    return problems


def _layer_problems() -> list[Problem]:
    problems = []
    for type_name in registry.layer_types():
        providers = registry.providers_of(type_name)
        generic = []
        for provider in providers:
            try:
                cls = provider.entry_point.load()
            except Exception as err:
                failure = f"{type(err).__name__}: {err}"
                problems.append(Problem((provider.distribution,), f"layer type '{type_name}' "
                                        f"({provider.entry_point.value}) failed to import: {failure}"))
                continue
            if not (isinstance(cls, type) and issubclass(cls, Layer)):
                problems.append(Problem((provider.distribution,), f"layer type '{type_name}' names "
                                        f"{provider.entry_point.value}, not a caffe_core Layer class"))
                continue
            if cls.type and cls.type != type_name:
                problems.append(Problem((provider.distribution,), f"layer type '{type_name}' names "
                                        f"{cls.__name__}, whose type is '{cls.type}'"))
            if not registry.says_which_layers(cls):
                generic.append(provider)
        chosen = registry.candidates(type_name)
        undecided = [p for p in generic if p in chosen]
        if len(undecided) > 1:
            labels = ", ".join(p.label for p in undecided)
            problems.append(Problem(tuple(p.label for p in undecided), (
                f"layer type '{type_name}' is provided by {labels}, and none of them says which layers it "
                f"takes (Layer.accepts): choose one with caffe_core.registry.prefer_provider('{type_name}', "
                f"'<distribution>') or {registry.PROVIDERS_ENV}='{type_name}=<distribution>', or uninstall "
                f"one")))
    return problems
