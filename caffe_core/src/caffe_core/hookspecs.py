"""The hook specifications of caffe_core: every extension point that is behaviour, in one module.

A pack implements any of these hooks in a plugin module and names that module under the
`caffe.plugins` entry-point group of its distribution:

    [project.entry-points."caffe.plugins"]
    mypack = "mypack.plugin"

The module is imported only when one of these hooks is first called (never at `import caffe_core`,
and never to list layer types). Keep it light: import heavy code inside the hook bodies.

Layer types are not hooks: they are a name-to-class map declared as entry points of the
`caffe.layers` group (`ReLU = "mypack.relu:ReLULayer"`), so listing them imports nothing.
Each hook returns a dict (None counts as empty); the dicts of all plugins are merged, and two plugins
giving the same name is an error naming both (for blocks and fields, unless the user chooses one of them).

A layer type may also have several classes (a Caffe fork redefined it): each class says which layers it
takes with a `Layer.accepts(layer_param)` classmethod (or `Layer.accepts_in_net(layer_param, net_layers)`,
where the net's other layers decide), and the factory picks the one that accepts.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

PROJECT = "caffe"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def caffe_fillers() -> dict[str, type] | None:
    """Filler types by FillerParameter.type name: classes taking a FillerParameter, with fill(blob)."""


@hookspec
def caffe_solvers() -> dict[str, type] | None:
    """Solver classes by SolverParameter.type name (e.g. "SGD", "Adam")."""


@hookspec
def caffe_db_backends() -> dict[str, type] | None:
    """Database backends for the Data layer by name (e.g. "lmdb", "leveldb")."""


@hookspec
def caffe_param_blocks() -> dict[str, object] | None:
    """Layer parameter blocks by field name (e.g. "zzz_param"): `caffe_core.schema_extensions.ParamBlock`s.

    Each block names a protobuf message class (compiled from the pack's .proto, or declared in Python
    with `caffe_core.messages.build_messages`) and a LayerParameter field number that BVLC leaves free
    (12-99, 149 and up; a pack reproducing a fork uses the fork's number), so that a prototxt may say
    `zzz_param { ... }` with no change to the core.
    """


@hookspec
def caffe_message_fields() -> dict[str, object] | None:
    """Fields a pack adds to Caffe's own messages, by "Message.field" (e.g. "PoolingParameter.ceil_mode").

    Each value is a `caffe_core.schema_extensions.ExtraField` (stored as an extension at a number BVLC
    leaves free in that message, e.g. the fork's own number; read it with
    `schema_extensions.get_extra_field`) or a `caffe_core.schema_extensions.FieldAlias` (rewritten into
    Caffe's own fields as the file is parsed).
    """


@hookspec
def caffe_onnx_converters() -> dict[str, Callable[..., None]] | None:
    """ONNX converters for the pack's layer classes, by entry-point name ("Type" or "Type[variant]").

    Each value is a callable `convert(layer, graph, bottoms, tops)`: `layer` is the built layer, `graph` a
    `caffe_core.onnx_export.OnnxGraph` to add nodes and initializers to, `bottoms` the ONNX names of the
    layer's inputs and `tops` the names its outputs must be given. A layer is converted by its own
    distribution's converter first; a converter another distribution gives under the same name is used
    when the providing one has none. Import onnx only inside the converters (it is an optional extra).
    """
