"""Hook implementations of caffe-layers-face: its parameter blocks, at the forks' LayerParameter numbers."""

from __future__ import annotations

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The forks' parameter blocks this pack reads."""
    return {}
