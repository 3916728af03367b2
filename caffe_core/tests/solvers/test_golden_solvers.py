"""The golden solver cases computed by BVLC Caffe: losses per iteration, weights and updates at checkpoints,
logged learning rates, and the final snapshot against Caffe's own (tolerance rtol 1e-4, atol 1e-5)."""

from __future__ import annotations

import json
import os
import pathlib
import shutil

import numpy as np
import pytest

from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.solvers import create_solver
from caffe_core.solvers.state_io import read_state

CASES_ROOT = pathlib.Path(__file__).parent.parent / "golden" / "solvers"
CASES = sorted(p.name for p in CASES_ROOT.iterdir() if (p / "case.json").exists())
NEEDED_TYPES = ("Input", "Convolution", "ReLU", "InnerProduct", "SoftmaxWithLoss")
RTOL, ATOL = 1e-4, 1e-5


# Skips only when no installed pack provides a type; an installed pack that fails to import fails them.
pytestmark = pytest.mark.requires_layer_types(*NEEDED_TYPES)


def _close(got, want) -> None:
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64),
                               rtol=RTOL, atol=ATOL)


def _params(net) -> dict[str, np.ndarray]:
    return {f"{name}/{j}": blob.cpu_data().copy()
            for name, layer in zip(net.layer_names, net.layers, strict=True)
            for j, blob in enumerate(layer.blobs)}


@pytest.fixture
def case(request, tmp_path, monkeypatch):
    work = tmp_path / request.param
    shutil.copytree(CASES_ROOT / request.param, work)
    monkeypatch.chdir(work)
    return json.loads((work / "case.json").read_text())


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_trajectory_matches_caffe(case):
    traj = np.load("trajectory.npz")
    batches = np.load("batches.npz")
    solver = create_solver(case["solver"])
    solver.net.copy_trained_layers_from(case["init_weights"])
    data, label = solver.net.blob_by_name("data"), solver.net.blob_by_name("label")
    lrs = []
    original = solver.get_learning_rate

    def recording_rate():
        rate = original()
        lrs.append(rate)
        return rate

    solver.get_learning_rate = recording_rate
    for i in range(case["iterations"]):
        data.mutable_cpu_data()[...] = batches["data"][i % 4]
        label.mutable_cpu_data()[...] = batches["label"][i % 4]
        solver.step(1)
        _close(solver.net.blob_by_name("loss").cpu_data(), traj["loss"][i])
        k = i + 1
        if k in case["checkpoints"]:
            for key, values in _params(solver.net).items():
                _close(values, traj[f"params/iter_{k}/{key}"])
                if f"update/iter_{k}/{key}" in traj.files:
                    blob = solver.net.layer_by_name(key.split("/")[0]).blobs[int(key.split("/")[1])]
                    _close(blob.cpu_diff(), traj[f"update/iter_{k}/{key}"])
    np.testing.assert_allclose(lrs, traj["lr_logged"], rtol=1e-5)


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_snapshot_matches_caffes(case, tmp_path):
    solver = create_solver(case["solver"])
    solver.net.copy_trained_layers_from(case["init_weights"])
    batches = np.load("batches.npz")
    for i in range(case["iterations"]):
        solver.net.blob_by_name("data").mutable_cpu_data()[...] = batches["data"][i % 4]
        solver.net.blob_by_name("label").mutable_cpu_data()[...] = batches["label"][i % 4]
        solver.step(1)
    os.makedirs("ours")
    solver.param.snapshot_prefix = "ours/snap"
    solver.snapshot()
    name = case["snapshot_states"][0]
    theirs, ours = read_state(name), read_state(os.path.join("ours", name))
    assert (ours.iter, ours.current_step) == (theirs.iter, theirs.current_step)
    assert ours.learned_net == "ours/" + theirs.learned_net
    assert len(ours.history) == len(theirs.history)
    for mine, caffes in zip(ours.history, theirs.history, strict=True):
        assert mine.shape == caffes.shape
        _close(mine, caffes)
    caffe_model = read_net_binary(case["snapshot_models"][0])
    our_model = read_net_binary(os.path.join("ours", case["snapshot_models"][0]))
    for layer in list(caffe_model.layer) + list(our_model.layer):
        del layer.blobs[:]
    assert our_model == caffe_model


@pytest.mark.parametrize("case", CASES, indirect=True)
def test_restoring_caffes_solverstate(case):
    name = case["snapshot_states"][0]
    solver = create_solver(case["solver"])
    solver.restore(name)
    expected = case["solverstates"][name]
    assert (solver.iter, solver.current_step) == (expected["iter"], expected["current_step"])
    assert [list(h.shape) for h in solver.history] == expected["history"]
    stored = caffe_pb2.SolverState()
    stored.ParseFromString(pathlib.Path(name).read_bytes())
    for blob, proto in zip(solver.history, stored.history, strict=True):
        np.testing.assert_array_equal(blob.cpu_data().ravel(), np.asarray(proto.data, np.float32))
    traj = np.load("trajectory.npz")
    for key, values in _params(solver.net).items():
        _close(values, traj[f"params/iter_{case['iterations']}/{key}"])


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["sgd_momentum", "adam", "adadelta"], indirect=True)
def test_trajectory_on_the_gpu(case, gpu_mode):
    traj = np.load("trajectory.npz")
    batches = np.load("batches.npz")
    solver = create_solver(case["solver"])
    solver.net.copy_trained_layers_from(case["init_weights"])
    for i in range(case["iterations"]):
        solver.net.blob_by_name("data").mutable_cpu_data()[...] = batches["data"][i % 4]
        solver.net.blob_by_name("label").mutable_cpu_data()[...] = batches["label"][i % 4]
        solver.step(1)
        _close(solver.net.blob_by_name("loss").cpu_data(), traj["loss"][i])
    for key, values in _params(solver.net).items():
        _close(values, traj[f"params/iter_{case['iterations']}/{key}"])
