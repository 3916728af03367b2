"""The training loop: log lines and their order, testing, loss smoothing, callbacks, requests, NaN handling,
finetuning, snapshots (names, formats, atomicity) and restore continuing exactly."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from caffe_core import proto_io, runtime
from caffe_core.errors import ModelFileError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.solvers import (
    NonFiniteLossError,
    SolverAction,
    SolverError,
    SolverStateError,
    create_solver,
)


def _messages(caffe_log) -> list[str]:
    return [r.getMessage() for r in caffe_log.records]


def _solver(quad, in_tmp, extra: str = "", net: str | None = None):
    return create_solver(quad.write_case(in_tmp, quad.BASE_SOLVER + extra, net))


def _weights(solver) -> np.ndarray:
    return solver.net.layers[0].blobs[0].cpu_data().copy()


def test_step_logs_loss_outputs_then_lr(quad, in_tmp, caffe_log):
    solver = _solver(quad, in_tmp)
    solver.step(2)
    lines = [m for m in _messages(caffe_log) if m.startswith(("Iteration", "    Train"))]
    loss0 = 0.5 * sum(v * v for v in quad.W0)
    assert re.fullmatch(rf"Iteration 0 \(\S+ iter/s, \S+s/1 iters\), loss = {loss0:g}", lines[0])
    assert lines[1] == f"    Train net output #0: loss = {loss0:g} (* 1 = {loss0:g} loss)"
    assert lines[2] == "Iteration 0, lr = 0.1"
    assert lines[3].startswith("Iteration 1 (") and lines[5] == "Iteration 1, lr = 0.1"
    assert solver.iter == 2


def test_display_interval(quad, in_tmp, caffe_log):
    _solver(quad, in_tmp, "display: 2\n").step(4)
    lr_lines = [m for m in _messages(caffe_log) if ", lr = " in m]
    assert lr_lines == ["Iteration 0, lr = 0.1", "Iteration 2, lr = 0.1"]


def test_solve_snapshots_and_runs_final_forward(quad, in_tmp, caffe_log):
    solver = _solver(quad, in_tmp)
    solver.solve()
    messages = _messages(caffe_log)
    assert messages.index("Solving quad") < messages.index("Learning Rate Policy: fixed")
    assert "Snapshotting to binary proto file snap_iter_4.caffemodel" in messages
    assert "Snapshotting solver state to binary proto file snap_iter_4.solverstate" in messages
    final = 0.5 * float((_weights(solver) ** 2).sum())
    assert f"Iteration 4, loss = {final:g}" in messages
    assert messages[-1] == "Optimization Done."
    assert os.path.exists("snap_iter_4.caffemodel") and os.path.exists("snap_iter_4.solverstate")


def test_snapshot_interval_and_no_extra_snapshot_after_train(quad, in_tmp):
    _solver(quad, in_tmp, "max_iter: 6\nsnapshot: 3\n").solve()
    assert sorted(f for f in os.listdir() if f.startswith("snap")) == [
        "snap_iter_3.caffemodel", "snap_iter_3.solverstate",
        "snap_iter_6.caffemodel", "snap_iter_6.solverstate"]


@pytest.mark.parametrize("write_diff", [False, True])
def test_snapshot_diff_writes_the_gradients_with_the_weights(quad, in_tmp, write_diff):
    # Caffe's Snapshot: net->ToProto(&net_param, param_.snapshot_diff()); the diff is the last update.
    solver = _solver(quad, in_tmp, f"snapshot_diff: {str(write_diff).lower()}\n")
    solver.solve()
    stored = proto_io.read_binary_file("snap_iter_4.caffemodel", caffe_pb2.NetParameter())
    blob = stored.layer[0].blobs[0]
    assert len(blob.data) > 0
    assert len(blob.diff) == (len(blob.data) if write_diff else 0)
    if write_diff:
        np.testing.assert_allclose(blob.diff, solver.net.layers[0].blobs[0].cpu_diff().ravel())
        assert np.abs(blob.diff).max() > 0


def test_outputs_of_several_blobs_are_numbered_in_order(quad, in_tmp, caffe_log):
    """Caffe numbers train and test outputs #0, #1, ... across the output blobs, in the net's order."""
    second = quad.net_text([3.0, 4.0]).replace('"q"', '"q2"').replace('top: "loss"', 'top: "loss2"')
    net = quad.net_text([1.0]) + second.split("\n", 1)[1]
    _solver(quad, in_tmp, "max_iter: 1\ntest_iter: 1\ntest_interval: 1\n", net).solve()
    messages = _messages(caffe_log)
    # 0.5 * 1 and 0.5 * (9 + 16), each weighted 1; after one step of lr 0.1 each w is 0.9 w, so 0.81 times
    assert [m for m in messages if "Train net output" in m] == [
        "    Train net output #0: loss = 0.5 (* 1 = 0.5 loss)",
        "    Train net output #1: loss2 = 12.5 (* 1 = 12.5 loss)"]
    assert [m for m in messages if "Test net output" in m] == [
        "    Test net output #0: loss = 0.5 (* 1 = 0.5 loss)",
        "    Test net output #1: loss2 = 12.5 (* 1 = 12.5 loss)",
        "    Test net output #0: loss = 0.405 (* 1 = 0.405 loss)",
        "    Test net output #1: loss2 = 10.125 (* 1 = 10.125 loss)"]


def test_snapshot_after_train_false(quad, in_tmp):
    _solver(quad, in_tmp, "snapshot_after_train: false\n").solve()
    assert not [f for f in os.listdir() if f.startswith("snap")]


def test_testing_schedule_and_shared_weights(quad, in_tmp, caffe_log):
    solver = _solver(quad, in_tmp, "test_iter: 2\ntest_interval: 2\n")
    solver.solve()
    messages = _messages(caffe_log)
    tests = [m for m in messages if "Testing net" in m]
    assert tests == [f"Iteration {i}, Testing net (#0)" for i in (0, 2, 4)]
    assert messages.index("Iteration 0, Testing net (#0)") < messages.index("Iteration 0, lr = 0.1")
    loss = 0.5 * float((_weights(solver) ** 2).sum())
    assert messages[-2] == f"    Test net output #0: loss = {loss:g} (* 1 = {loss:g} loss)"
    np.testing.assert_array_equal(solver.test_nets[0].layers[0].blobs[0].cpu_data(), _weights(solver))
    assert solver.test_scores[0] == [pytest.approx(loss, rel=1e-6)]


def test_no_test_at_zero_without_test_initialization(quad, in_tmp, caffe_log):
    _solver(quad, in_tmp, "test_iter: 1\ntest_interval: 2\ntest_initialization: false\n").step(3)
    assert [m for m in _messages(caffe_log) if "Testing net" in m] == ["Iteration 2, Testing net (#0)"]


def test_test_compute_loss(quad, in_tmp, caffe_log):
    solver = _solver(quad, in_tmp, "test_iter: 3\ntest_interval: 10\ntest_compute_loss: true\n")
    solver.test(0)
    assert f"Test loss: {0.5 * sum(v * v for v in quad.W0):g}" in _messages(caffe_log)


def test_average_loss_smooths_within_one_step_call(quad, in_tmp, caffe_log):
    solver = _solver(quad, in_tmp, "average_loss: 2\n")
    losses = []
    solver.add_callback(type("Record", (), {
        "on_start": lambda self: None,
        "on_gradients_ready": lambda self: losses.append(float(solver.net.blobs[-1].cpu_data()))})())
    solver.step(3)
    logged = [float(m.rsplit("= ", 1)[1]) for m in _messages(caffe_log) if re.match(r"Iteration \d+ \(", m)]
    expected = [losses[0], (losses[0] + losses[1]) / 2, (losses[1] + losses[2]) / 2]
    np.testing.assert_allclose(logged, expected, rtol=1e-5)


def test_callbacks_run_around_each_iteration(quad, in_tmp):
    solver = _solver(quad, in_tmp)
    events = []

    def gradient_size() -> float:
        return float(np.abs(solver.net.learnable_params[0].cpu_diff()).sum())

    class Recorder:
        def on_start(self):
            events.append(("start", solver.iter, gradient_size()))

        def on_gradients_ready(self):
            events.append(("ready", solver.iter, gradient_size()))

    solver.add_callback(Recorder())
    solver.step(2)
    assert [e[:2] for e in events] == [("start", 0), ("ready", 0), ("start", 1), ("ready", 1)]
    assert events[0][2] == 0 and events[1][2] == pytest.approx(sum(abs(v) for v in quad.W0))


def test_stop_and_snapshot_requests(quad, in_tmp):
    solver = _solver(quad, in_tmp, "max_iter: 10\n")
    requests = iter([SolverAction.NONE, SolverAction.SNAPSHOT, SolverAction.STOP])
    solver.set_action_function(lambda: next(requests, SolverAction.NONE))
    solver.solve()
    assert solver.iter == 3 and solver.requested_early_exit
    assert sorted(f for f in os.listdir() if f.endswith(".caffemodel")) == ["snap_iter_2.caffemodel",
                                                                           "snap_iter_3.caffemodel"]


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_nan_loss_is_logged_and_optionally_stops(quad, in_tmp, caffe_log):
    net = quad.net_text(w0=(1.0, float("inf")))
    solver = _solver(quad, in_tmp, net=net)
    solver.step(1)
    assert "Iteration 0, loss = inf is not finite" in _messages(caffe_log)
    stopping = _solver(quad, in_tmp, net=net)
    stopping.stop_on_nan = True
    with pytest.raises(NonFiniteLossError, match="iteration 0"):
        stopping.step(3)
    assert stopping.iter == 0


def test_finetuning_from_a_comma_list_of_weights(quad, in_tmp, caffe_log):
    first = Net(proto_io.parse_text(quad.net_text(w0=(5.0, 5.0, 5.0, 5.0)), caffe_pb2.NetParameter()))
    first.save("a.caffemodel")
    first.layers[0].blobs[0].mutable_cpu_data()[...] = 7.0
    first.save("b.caffemodel")
    solver = _solver(quad, in_tmp, 'weights: "a.caffemodel, b.caffemodel"\n')
    np.testing.assert_array_equal(_weights(solver), [7.0] * 4)
    assert "Finetuning from a.caffemodel" in _messages(caffe_log)
    with pytest.raises(ModelFileError, match="missing.caffemodel"):
        _solver(quad, in_tmp, 'weights: "missing.caffemodel"\n')


@pytest.mark.parametrize("seed", [42, 0])
def test_random_seed_seeds_the_runtime(quad, in_tmp, seed):
    """Caffe seeds for any random_seed >= 0 (0 included); the default -1 leaves the seed alone."""
    _solver(quad, in_tmp, f"random_seed: {seed}\n")
    assert runtime.random_seed() == seed


@pytest.mark.parametrize("solver_type", ["SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"])
@pytest.mark.parametrize("snapshot_format", ["BINARYPROTO", "HDF5"])
def test_restore_continues_exactly(quad, in_tmp, solver_type, snapshot_format):
    extra = (f'type: "{solver_type}"\nmax_iter: 6\nsnapshot_format: {snapshot_format}\nweight_decay: 0.01\n'
             + ("momentum: 0.9\n" if solver_type in ("SGD", "Nesterov", "AdaDelta", "Adam") else "")
             + 'lr_policy: "multistep"\ngamma: 0.5\nstepvalue: 2\nstepvalue: 4\n')
    whole = _solver(quad, in_tmp, extra)
    whole.step(6)
    first = _solver(quad, in_tmp, extra)
    first.step(3)
    first.snapshot()
    suffix = ".solverstate.h5" if snapshot_format == "HDF5" else ".solverstate"
    resumed = _solver(quad, in_tmp, extra)
    resumed.restore("snap_iter_3" + suffix)
    assert (resumed.iter, resumed.current_step) == (3, 1)
    resumed.step(3)
    np.testing.assert_array_equal(_weights(resumed), _weights(whole))
    for mine, theirs in zip(resumed.history, whole.history, strict=True):
        np.testing.assert_array_equal(mine.cpu_data(), theirs.cpu_data())


def test_solve_with_resume_file(quad, in_tmp):
    whole = _solver(quad, in_tmp, "momentum: 0.9\nsnapshot: 2\n")
    whole.solve()
    resumed = _solver(quad, in_tmp, 'momentum: 0.9\nsnapshot_prefix: "again"\n')
    resumed.solve("snap_iter_2.solverstate")
    np.testing.assert_array_equal(_weights(resumed), _weights(whole))
    assert os.path.exists("again_iter_4.caffemodel")


def test_hdf5_snapshot_layout(quad, in_tmp):
    import h5py

    solver = _solver(quad, in_tmp, 'type: "Adam"\nsnapshot_format: HDF5\nmomentum: 0.9\n')
    solver.step(2)
    solver.snapshot()
    with h5py.File("snap_iter_2.solverstate.h5", "r") as f:
        assert f["iter"].dtype == np.int32 and f["iter"].shape == (1,) and f["iter"][0] == 2
        assert f["current_step"][0] == 0
        assert f["learned_net"][()] == b"snap_iter_2.caffemodel.h5"
        assert sorted(f["history"]) == ["0", "1"]
    with h5py.File("snap_iter_2.caffemodel.h5", "r") as f:
        np.testing.assert_array_equal(f["data/q/0"][()], _weights(solver))


def test_restore_from_another_net_changes_nothing(quad, in_tmp):
    other = _solver(quad, in_tmp, 'snapshot_prefix: "other"\n', net=quad.net_text(w0=(1.0, 2.0)))
    other.step(1)
    other.snapshot()
    solver = _solver(quad, in_tmp, "momentum: 0.9\n")
    solver.step(1)
    before = _weights(solver)
    with pytest.raises(SolverStateError, match=r"other_iter_1.solverstate: history blob 0 has shape \(2,\)"):
        solver.restore("other_iter_1.solverstate")
    np.testing.assert_array_equal(_weights(solver), before)
    assert solver.iter == 1


def test_restore_with_a_different_solver_type_is_refused(quad, in_tmp):
    adam = _solver(quad, in_tmp, 'type: "Adam"\n')
    adam.snapshot()
    with pytest.raises(SolverStateError, match="Incorrect length of history blobs: the state holds 2"):
        _solver(quad, in_tmp).restore("snap_iter_0.solverstate")


def test_restore_missing_learned_net(quad, in_tmp):
    solver = _solver(quad, in_tmp)
    solver.snapshot()
    os.remove("snap_iter_0.caffemodel")
    with pytest.raises(SolverStateError, match="learned_net: 'snap_iter_0.caffemodel'"):
        solver.restore("snap_iter_0.solverstate")
    with pytest.raises(SolverStateError, match="nothing.solverstate: solver state file not found"):
        solver.restore("nothing.solverstate")


def test_failed_snapshot_write_leaves_the_previous_file(quad, in_tmp, monkeypatch):
    solver = _solver(quad, in_tmp)
    solver.snapshot()
    before = open("snap_iter_0.caffemodel", "rb").read()
    solver.step(1)
    solver.iter = 0

    def failing_fsync(fd):
        raise OSError("disk full")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", failing_fsync)
        with pytest.raises(SolverError, match="Cannot write the snapshot of iteration 0 .*disk full"):
            solver.snapshot()
    assert open("snap_iter_0.caffemodel", "rb").read() == before
    assert not [f for f in os.listdir() if f.startswith(".tmp-")]


def test_several_test_nets_from_every_source(quad, in_tmp, caffe_log):
    net = quad.net_text()
    with open("train.prototxt", "w") as f:
        f.write(net)
    with open("test.prototxt", "w") as f:
        f.write(net.replace("data: 1.0", "data: 3.0"))
    inline = net.replace("data: 1.0", "data: 5.0").replace("\n", " ")
    solver = create_solver(quad.write_case(in_tmp, (
        f'train_net: "train.prototxt"\ntest_net_param {{ {inline} }}\ntest_net: "test.prototxt"\n'
        'test_iter: 1\ntest_iter: 1\ntest_interval: 100\nbase_lr: 0.1\nlr_policy: "fixed"\n'
        'test_state { stage: "a" }\ntest_state { stage: "b" }\nsnapshot_prefix: "s"\n')))
    solver.test_all()
    messages = _messages(caffe_log)
    assert "Creating training net from train_net file: train.prototxt" in messages
    assert "Creating test net (#0) specified by test_net_param" in messages
    assert "Creating test net (#1) specified by test_net file: test.prototxt" in messages
    assert [m for m in messages if "Testing net" in m] == ["Iteration 0, Testing net (#0)",
                                                           "Iteration 0, Testing net (#1)"]
    assert [net.layers[0].phase for net in solver.test_nets] == [caffe_pb2.TEST, caffe_pb2.TEST]
    # Test nets share the train net's weights, whatever they were built with.
    assert solver.test_scores == [[pytest.approx(0.5 * sum(v * v for v in quad.W0))]] * 2


def test_generic_net_gives_one_test_net_per_test_iter(quad, in_tmp):
    solver = _solver(quad, in_tmp, "test_iter: 1\ntest_iter: 2\ntest_interval: 5\n")
    assert len(solver.test_nets) == 2
    assert solver.net.layers[0].phase == caffe_pb2.TRAIN
    assert all(net.layers[0].phase == caffe_pb2.TEST for net in solver.test_nets)


def test_unwritable_snapshot_prefix_is_a_clear_error(quad, in_tmp):
    solver = _solver(quad, in_tmp, 'snapshot_prefix: "no/such/dir/snap"\n')
    with pytest.raises(SolverError, match="snapshot_prefix 'no/such/dir/snap'"):
        solver.solve()
