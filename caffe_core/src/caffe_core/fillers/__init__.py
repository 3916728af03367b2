"""Fillers: the initialisers named by FillerParameter.type, found through the `caffe_fillers` hook."""

from __future__ import annotations

import difflib
import functools

from caffe_core import plugins
from caffe_core.errors import CaffeError
from caffe_core.fillers.base import Filler
from caffe_core.proto import caffe_pb2

__all__ = ["Filler", "filler_types", "get_filler"]


def filler_types() -> dict[str, type[Filler]]:
    """Every installed filler class by type name."""
    return _filler_types_of(plugins.generation())


@functools.lru_cache(maxsize=1)
def _filler_types_of(generation: int) -> dict[str, type[Filler]]:
    return plugins.collect("caffe_fillers")


def get_filler(param: caffe_pb2.FillerParameter) -> Filler:
    """Creates the filler a FillerParameter names; an unknown name lists the known ones."""
    types = filler_types()
    if param.type not in types:
        close = difflib.get_close_matches(param.type, list(types), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise CaffeError(f"Unknown filler type '{param.type}' (known: {', '.join(sorted(types))}){hint}")
    return types[param.type](param)
