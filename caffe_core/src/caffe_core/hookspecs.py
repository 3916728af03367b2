"""The hook specifications of caffe_core: every extension point that is behaviour, in one module.

A pack implements any of these hooks in a plugin module and names that module under the
`caffe.plugins` entry-point group of its distribution:

    [project.entry-points."caffe.plugins"]
    mypack = "mypack.plugin"

The module is imported only when one of these hooks is first called (never at `import caffe_core`,
and never to list layer types). Keep it light: import heavy code inside the hook bodies.

Layer types are not hooks: they are a name-to-class map declared as entry points of the
`caffe.layers` group (`ReLU = "mypack.relu:ReLULayer"`), so listing them imports nothing.
Each hook returns a dict; the dicts of all plugins are merged, and two plugins giving the same
name is an error naming both.
"""

from __future__ import annotations

from typing import Any

import pluggy

PROJECT = "caffe"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def caffe_fillers() -> dict[str, Any]:
    """Filler types by FillerParameter.type name: classes taking a FillerParameter, with fill(blob)."""


@hookspec
def caffe_solvers() -> dict[str, Any]:
    """Solver classes by SolverParameter.type name (e.g. "SGD", "Adam")."""


@hookspec
def caffe_db_backends() -> dict[str, Any]:
    """Database backends for the Data layer by name (e.g. "lmdb", "leveldb")."""


@hookspec
def caffe_param_blocks() -> dict[str, Any]:
    """Extra layer parameter blocks by field name (e.g. "zzz_param"): `ParamBlock`s.

    Each block names a protobuf message class of the pack's own schema and a LayerParameter field
    number (>= 1000), so that a prototxt may say `zzz_param { ... }` with no change to the core.
    """
