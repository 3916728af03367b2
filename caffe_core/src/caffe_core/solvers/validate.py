"""Checks of a SolverParameter made before anything is built, each error naming the field at fault."""

from __future__ import annotations

import os

from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverError
from caffe_core.solvers.lr_policy import check_policy

TRAIN_NET_FIELDS = ("net", "net_param", "train_net", "train_net_param")
REGULARIZATION_TYPES = ("L2", "L1")


def check_solver_param(param: caffe_pb2.SolverParameter) -> None:
    """Raises SolverError for a configuration Caffe would refuse (or divide by zero on)."""
    _check_nets(param)
    for field in ("max_iter", "display", "snapshot", "test_interval"):
        if getattr(param, field) < 0:
            raise SolverError(f"{field} must be >= 0, got {getattr(param, field)}")
    for field in ("average_loss", "iter_size"):
        if getattr(param, field) < 1:
            raise SolverError(f"{field} must be >= 1, got {getattr(param, field)}")
    for i, value in enumerate(param.test_iter):
        if value <= 0:
            raise SolverError(f"test_iter #{i} must be > 0, got {value}")
    if param.base_lr < 0:
        raise SolverError(f"base_lr must be >= 0, got {param.base_lr:g}")
    if param.weight_decay < 0:
        raise SolverError(f"weight_decay must be >= 0, got {param.weight_decay:g}")
    if param.regularization_type not in REGULARIZATION_TYPES:
        raise SolverError(f"Unknown regularization type: '{param.regularization_type}' "
                          f"(regularization_type must be L2 or L1)")
    check_policy(param)
    if param.snapshot and not param.snapshot_prefix:
        raise SolverError("In solver params, snapshot is specified but snapshot_prefix is not")
    _check_snapshot_directory(param)


def _check_nets(param: caffe_pb2.SolverParameter) -> None:
    given = [field for field in TRAIN_NET_FIELDS if param.HasField(field)]
    if not given:
        raise SolverError(f"SolverParameter must specify a train net using one of these fields: "
                          f"{', '.join(TRAIN_NET_FIELDS)}")
    if len(given) > 1:
        raise SolverError(f"SolverParameter must not contain more than one of these fields specifying a "
                          f"train net: {', '.join(TRAIN_NET_FIELDS)} (got {', '.join(given)})")
    generic = param.HasField("net") or param.HasField("net_param")
    explicit = len(param.test_net) + len(param.test_net_param)
    if (generic and len(param.test_iter) < explicit) or (not generic and len(param.test_iter) != explicit):
        raise SolverError(f"test_iter must be specified for each test network ({len(param.test_iter)} "
                          f"test_iter for {explicit} test_net/test_net_param)")
    instances = len(param.test_iter) if generic else explicit
    if param.test_state and len(param.test_state) != instances:
        raise SolverError(f"test_state must be unspecified or specified once per test net "
                          f"({len(param.test_state)} test_state for {instances} test nets)")
    if instances and param.test_interval <= 0:
        raise SolverError(f"test_interval must be > 0 when there are test nets, got {param.test_interval}")


def _check_snapshot_directory(param: caffe_pb2.SolverParameter) -> None:
    if not param.snapshot:
        return
    directory = os.path.dirname(param.snapshot_prefix) or "."
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK):
        raise SolverError(f"Cannot write to snapshot prefix '{param.snapshot_prefix}'. Make sure that the "
                          f"directory exists and is writeable.")
