"""The index of known layer packs: which published pack provides a layer type, a parameter block or a field.

It is data (`pack_index.json`, written by `caffe-packs index` from the packs of this repository), so the
core names no fork in code. Errors about something no installed pack declares use it to say which pack to
install.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

INDEX_FILE = "pack_index.json"


@functools.cache
def known_index() -> dict[str, dict[str, list[str]]]:
    """The index shipped with caffe-core."""
    return json.loads(resources.files("caffe_core").joinpath(INDEX_FILE).read_text(encoding="utf-8"))


def packs_providing(kind: str, name: str) -> list[str]:
    """The known packs whose `kind` ('layer_types', 'param_blocks' or 'fields') includes `name`."""
    return [dist for dist, entry in known_index().items() if name in entry.get(kind, ())]


def install_hint(kind: str, name: str) -> str:
    """' (caffe-layers-x provides it: pip install caffe-layers-x)', or '' when no known pack does."""
    packs = packs_providing(kind, name)
    if not packs:
        return ""
    return f" ({' or '.join(packs)} provides it: pip install {packs[0]})"
