"""pycaffe's solvers on the golden solver net: get_solver, the typed classes, net/test_nets views, step with
fed inputs, callbacks, lr, base_lr, snapshot/restore, apply_update and share_weights."""

from __future__ import annotations

import pathlib
import shutil

import numpy as np
import pytest

import caffe
from caffe_core.errors import CaffeError
from caffe_core.testing.layers import require_layer_types

CASES = pathlib.Path(__file__).parent.parent / "golden" / "solvers"
NEEDED = ("Input", "Convolution", "ReLU", "InnerProduct", "SoftmaxWithLoss")


def _skip_without_layers() -> None:
    require_layer_types(*NEEDED)


@pytest.fixture
def case(request, tmp_path, monkeypatch):
    _skip_without_layers()
    shutil.copytree(CASES / request.param, tmp_path / request.param)
    monkeypatch.chdir(tmp_path / request.param)
    return np.load("trajectory.npz"), np.load("batches.npz")


def _feed(solver, batches, i: int) -> None:
    solver.net.blobs["data"].data[...] = batches["data"][i % 4]
    solver.net.blobs["label"].data[...] = batches["label"][i % 4]


def _check_params(net, traj, k: int) -> None:
    for name, blobs in net.params.items():
        for j, blob in enumerate(blobs):
            np.testing.assert_allclose(blob.data, traj[f"params/iter_{k}/{name}/{j}"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["adam"], indirect=True)
def test_get_solver_drives_like_pycaffe(case):
    traj, batches = case
    solver = caffe.get_solver("solver.prototxt")
    assert isinstance(solver, caffe.AdamSolver) and solver.core.type == "Adam"
    assert isinstance(solver.net, caffe.Net) and solver.test_nets == []
    assert solver.net is solver.net
    solver.net.copy_from("init.caffemodel")
    for i in range(10):
        _feed(solver, batches, i)
        solver.step(1)
        np.testing.assert_allclose(solver.net.blobs["loss"].data, traj["loss"][i], rtol=1e-4, atol=1e-5)
    assert solver.iter == 10
    _check_params(solver.net, traj, 10)


@pytest.mark.parametrize("case", ["sgd_momentum"], indirect=True)
def test_add_callback_feeds_one_step_call(case):
    traj, batches = case
    solver = caffe.SGDSolver("solver.prototxt")
    solver.net.copy_from("init.caffemodel")
    fed = []

    def on_start():
        _feed(solver, batches, len(fed))
        fed.append(solver.iter)

    solver.add_callback(on_start, lambda: None)
    solver.step(10)
    assert fed == list(range(10))
    _check_params(solver.net, traj, 10)


@pytest.mark.parametrize("case", ["adam"], indirect=True)
def test_typed_class_ignores_the_file_type(case):
    assert caffe.SGDSolver("solver.prototxt").core.type == "SGD"
    assert caffe.AdamSolver("solver.prototxt").core.type == "Adam"
    with pytest.raises(CaffeError, match="Momentum cannot be used with AdaGrad"):
        caffe.AdaGradSolver("solver.prototxt")


@pytest.mark.parametrize("case", ["sgd_lr_multistep"], indirect=True)
def test_lr_reads_get_learning_rate(case):
    traj, batches = case
    solver = caffe.get_solver("solver.prototxt")
    assert solver.lr == pytest.approx(traj["lr_logged"][0], rel=1e-5)
    for i in range(2):
        _feed(solver, batches, i)
        solver.step(1)
    assert solver.lr == pytest.approx(traj["lr_logged"][2], rel=1e-5)
    assert solver.core.current_step == 1
    solver.param.base_lr = 1.0
    assert solver.lr == pytest.approx(0.5)


@pytest.mark.parametrize("case", ["nesterov"], indirect=True)
def test_snapshot_and_restore(case):
    traj, batches = case
    solver = caffe.get_solver("solver.prototxt")
    solver.net.copy_from("init.caffemodel")
    for i in range(3):
        _feed(solver, batches, i)
        solver.step(1)
    solver.snapshot()
    fresh = caffe.get_solver("solver.prototxt")
    fresh.restore("snap_iter_3.solverstate")
    assert fresh.iter == 3
    for i in range(3, 10):
        _feed(fresh, batches, i)
        fresh.step(1)
    _check_params(fresh.net, traj, 10)


@pytest.mark.parametrize("case", ["sgd_lr_fixed"], indirect=True)
def test_apply_update_and_share_weights(case):
    _, batches = case
    solver = caffe.get_solver("solver.prototxt")
    solver.net.copy_from("init.caffemodel")
    _feed(solver, batches, 0)
    solver.net.clear_param_diffs()
    solver.net.forward()
    solver.net.backward()
    before = solver.net.params["ip"][0].data.copy()
    solver.apply_update()
    assert solver.iter == 0
    assert not np.array_equal(solver.net.params["ip"][0].data, before)
    test_net = caffe.Net("net.prototxt", caffe.TEST)
    solver.share_weights(test_net)
    np.testing.assert_array_equal(test_net.params["ip"][0].data, solver.net.params["ip"][0].data)
