"""Solver state files: binary and HDF5 round trips, Caffe's HDF5 types, and errors naming the file."""

import numpy as np
import pytest

from caffe_core.errors import ModelFileError
from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverStateError
from caffe_core.solvers.state_io import SolverStateData, read_state, write_state

STATE = SolverStateData(iter=7, current_step=2, learned_net="run_iter_7.caffemodel",
                        history=[np.arange(6, dtype=np.float32).reshape(2, 3), np.array([0.5], np.float32)])


@pytest.mark.parametrize("name", ["s.solverstate", "s.solverstate.h5"])
def test_round_trip(tmp_path, name):
    write_state(tmp_path / name, STATE)
    got = read_state(tmp_path / name)
    assert (got.iter, got.current_step, got.learned_net) == (7, 2, "run_iter_7.caffemodel")
    for mine, stored in zip(got.history, STATE.history, strict=True):
        np.testing.assert_array_equal(mine, stored)


def test_binary_state_is_a_solverstate_with_nd_shapes(tmp_path):
    write_state(tmp_path / "s.solverstate", STATE)
    proto = caffe_pb2.SolverState()
    proto.ParseFromString((tmp_path / "s.solverstate").read_bytes())
    assert list(proto.history[0].shape.dim) == [2, 3] and not proto.history[0].HasField("num")


def test_hdf5_types_are_caffes(tmp_path):
    import h5py

    write_state(tmp_path / "s.solverstate.h5", STATE)
    with h5py.File(tmp_path / "s.solverstate.h5", "r") as f:
        assert f["iter"].dtype == np.int32 and f["iter"].shape == (1,)
        assert f["learned_net"].dtype == np.dtype("S22") and f["learned_net"].shape == ()
        assert f["history/0"].shape == (2, 3)


def test_errors_name_the_file(tmp_path):
    with pytest.raises(SolverStateError, match="absent.solverstate: solver state file not found"):
        read_state(tmp_path / "absent.solverstate")
    (tmp_path / "junk.solverstate").write_bytes(b"\xff\xff\xff")
    with pytest.raises(ModelFileError, match="junk.solverstate: not a valid binary SolverState"):
        read_state(tmp_path / "junk.solverstate")
    (tmp_path / "junk.solverstate.h5").write_bytes(b"not hdf5")
    with pytest.raises(SolverStateError, match="junk.solverstate.h5: not a readable HDF5 solver state"):
        read_state(tmp_path / "junk.solverstate.h5")
