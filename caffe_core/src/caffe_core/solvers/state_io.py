"""Solver state files: Caffe's binary `SolverState` (.solverstate) and its HDF5 layout (.solverstate.h5)."""

from __future__ import annotations

import dataclasses
import os
import tempfile

import numpy as np

from caffe_core import proto_io
from caffe_core.blob import Blob, proto_shape
from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverStateError


@dataclasses.dataclass
class SolverStateData:
    """What a solver saves besides the weights: iteration, lr step, weights file and history arrays."""

    iter: int
    current_step: int
    learned_net: str
    history: list[np.ndarray]


def is_hdf5_state(path: str) -> bool:
    """Caffe picks the HDF5 reader by the `.h5` suffix."""
    return path.endswith(".h5")


def read_state(path: str | os.PathLike) -> SolverStateData:
    """Reads a .solverstate (binary) or .solverstate.h5."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise SolverStateError(f"{path}: solver state file not found")
    return _read_hdf5(path) if is_hdf5_state(path) else _read_binary(path)


def write_state(path: str | os.PathLike, state: SolverStateData) -> None:
    """Writes a solver state atomically, in HDF5 when the name ends with `.h5`."""
    path = os.fspath(path)
    if is_hdf5_state(path):
        _write_hdf5(path, state)
    else:
        proto_io.write_binary_file(path, to_proto(state))


def to_proto(state: SolverStateData) -> caffe_pb2.SolverState:
    """The binary SolverState message of a state (N-D history shapes, as Caffe writes)."""
    proto = caffe_pb2.SolverState(iter=state.iter, learned_net=state.learned_net,
                                  current_step=state.current_step)
    for values in state.history:
        blob = Blob(values.shape)
        blob.mutable_cpu_data()[...] = values
        proto.history.append(blob.to_proto())
    return proto


def _read_binary(path: str) -> SolverStateData:
    proto = proto_io.read_binary_file(path, caffe_pb2.SolverState())
    history = []
    for i, stored in enumerate(proto.history):
        blob = Blob()
        try:
            blob.from_proto(stored)
        except ValueError as err:
            raise SolverStateError(f"{path}: history blob {i} of shape {proto_shape(stored)} is corrupt: "
                                   f"{err}") from None
        history.append(blob.cpu_data().copy())
    return SolverStateData(proto.iter, proto.current_step, proto.learned_net, history)


def _read_hdf5(path: str) -> SolverStateData:
    import h5py

    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise SolverStateError(f"{path}: not a readable HDF5 solver state: {err}") from None
    with f:
        for name in ("iter", "current_step", "history"):
            if name not in f:
                raise SolverStateError(f"{path}: HDF5 solver state has no '{name}'")
        learned_net = ""
        if "learned_net" in f:
            raw = f["learned_net"][()]
            learned_net = (raw.decode() if isinstance(raw, bytes) else str(raw)).rstrip("\0")
        group = f["history"]
        history = [np.asarray(group[str(i)], dtype=np.float32) for i in range(len(group))]
        return SolverStateData(int(np.asarray(f["iter"]).ravel()[0]),
                               int(np.asarray(f["current_step"]).ravel()[0]), learned_net, history)


def _write_hdf5(path: str, state: SolverStateData) -> None:
    import h5py

    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=directory)
    os.close(fd)
    try:
        with h5py.File(tmp, "w") as f:
            f.create_dataset("iter", data=np.array([state.iter], dtype=np.int32))
            name = state.learned_net.encode() + b"\0"
            f.create_dataset("learned_net", data=np.array(name, dtype=f"S{len(name)}"))
            f.create_dataset("current_step", data=np.array([state.current_step], dtype=np.int32))
            group = f.create_group("history")
            for i, values in enumerate(state.history):
                group.create_dataset(str(i), data=np.asarray(values, dtype=np.float32))
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
