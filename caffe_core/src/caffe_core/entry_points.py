"""Reading entry points without importing what they point to."""

from __future__ import annotations

import importlib_metadata


def entry_points_of(group: str) -> list[importlib_metadata.EntryPoint]:
    """All installed entry points of a group, in a stable order."""
    return sorted(importlib_metadata.entry_points(group=group), key=lambda ep: (ep.name, ep.value))
