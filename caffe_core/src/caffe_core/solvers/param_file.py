"""Reading a solver prototxt as Caffe's ReadSolverParamsFromTextFileOrDie: parse, upgrade, default prefix."""

from __future__ import annotations

import logging
import os

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade.solver_type import upgrade_solver_as_needed

log = logging.getLogger("caffe.solver")


def read_solver_param(path: str | os.PathLike) -> caffe_pb2.SolverParameter:
    """Reads a text SolverParameter, upgrades solver_type and fills snapshot_prefix as Caffe does."""
    path = os.fspath(path)
    param = proto_io.read_text_file(path, caffe_pb2.SolverParameter())
    upgrade_solver_as_needed(param, path)
    upgrade_snapshot_prefix(param, path)
    return param


def upgrade_snapshot_prefix(param: caffe_pb2.SolverParameter, path: str) -> None:
    """An unset prefix becomes the solver path without extension; a directory becomes `dir/<stem>`."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if not param.HasField("snapshot_prefix"):
        param.snapshot_prefix = os.path.splitext(path)[0]
        log.info("snapshot_prefix was not specified and is set to %s", param.snapshot_prefix)
    elif os.path.isdir(param.snapshot_prefix):
        param.snapshot_prefix = os.path.join(param.snapshot_prefix, stem)
        log.info("snapshot_prefix is a directory and is set to %s", param.snapshot_prefix)
