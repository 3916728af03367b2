"""Reading solver files: the solver_type upgrade and Caffe's default snapshot_prefix."""

import os

import pytest

from caffe_core.errors import PrototxtError
from caffe_core.solvers import read_solver_param


def _write(path, text: str) -> str:
    with open(path, "w") as f:
        f.write(text)
    return os.fspath(path)


def test_unset_prefix_is_the_solver_path_without_extension(tmp_path):
    param = read_solver_param(_write(tmp_path / "lenet_solver.prototxt", 'net: "n.prototxt"\n'))
    assert param.snapshot_prefix == os.fspath(tmp_path / "lenet_solver")


def test_directory_prefix_gets_the_solver_stem(tmp_path):
    (tmp_path / "snaps").mkdir()
    text = f'net: "n.prototxt"\nsnapshot_prefix: "{tmp_path / "snaps"}"\n'
    param = read_solver_param(_write(tmp_path / "s.prototxt", text))
    assert param.snapshot_prefix == os.fspath(tmp_path / "snaps" / "s")


def test_plain_prefix_is_kept(tmp_path):
    param = read_solver_param(_write(tmp_path / "s.prototxt", 'net: "n"\nsnapshot_prefix: "out/run"\n'))
    assert param.snapshot_prefix == "out/run"


def test_deprecated_solver_type_is_upgraded(tmp_path):
    param = read_solver_param(_write(tmp_path / "s.prototxt", 'net: "n"\nsolver_type: ADAM\n'))
    assert param.type == "Adam" and not param.HasField("solver_type")


def test_missing_and_malformed_files_name_the_file(tmp_path):
    with pytest.raises(PrototxtError, match="nowhere.prototxt: file not found"):
        read_solver_param(tmp_path / "nowhere.prototxt")
    with pytest.raises(PrototxtError, match=r"bad.prototxt:1"):
        read_solver_param(_write(tmp_path / "bad.prototxt", "base_lrr: 0.1\n"))


def test_solver_type_and_type_together_are_refused(tmp_path):
    path = _write(tmp_path / "both.prototxt", 'net: "n"\nsolver_type: ADAM\ntype: "SGD"\n')
    with pytest.raises(PrototxtError, match="both.prototxt: Failed to upgrade solver: old solver_type field"):
        read_solver_param(path)
