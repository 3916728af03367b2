"""`caffe train`: Caffe's log lines, finetuning, resume, signals, NaN, the progress bar, GPU requests, and
bad input (clear error, exit 1, nothing written)."""

from __future__ import annotations

import os
import re
import signal
import sys

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.tools import caffe_cli_train

from .conftest import GLOG, SOLVER, glog_messages, run_caffe, snapshot_files


def test_train_logs_like_caffe(capsys, case_dir):
    status, err = run_caffe(capsys, "train", "-solver=solver.prototxt", "-weights", "init.caffemodel")
    assert status == 0
    assert all(GLOG.match(line) for line in err.splitlines() if line.startswith(("I1", "W1", "E1")))
    messages = glog_messages(err)
    for expected in ["Use CPU.", "Finetuning from init.caffemodel", "Starting Optimization",
                     "Solving solvernet", "Learning Rate Policy: step", "Iteration 4, lr = 0.025",
                     "Snapshotting to binary proto file snap_iter_10.caffemodel"]:
        assert expected in messages
    text = "\n".join(messages)
    assert re.search(r"^Iteration 0 \(\S+ iter/s, \S+s/1 iters\), loss = [\d.]+$", text, re.M)
    assert re.search(r"^    Train net output #0: loss = ([\d.e-]+) \(\* 1 = \1 loss\)$", text, re.M)
    assert re.search(r"^Iteration 10, loss = [\d.e-]+$", text, re.M)
    assert messages[-2:] == ["Optimization Done.", "Optimization Done."]
    assert snapshot_files() == ["snap_iter_10.caffemodel", "snap_iter_10.solverstate"]


def test_resume_from_snapshot_continues_exactly(capsys, case_dir):
    with open("solver.prototxt", "a") as f:
        f.write("snapshot: 5\n")
    assert run_caffe(capsys, "train", "-solver", "solver.prototxt", "-weights", "init.caffemodel")[0] == 0
    whole = Net("net.prototxt", phase=caffe_pb2.TRAIN)
    whole.copy_trained_layers_from("snap_iter_10.caffemodel")
    os.remove("snap_iter_10.caffemodel")
    status, err = run_caffe(capsys, "train", "--solver", "solver.prototxt",
                       "--snapshot", "snap_iter_5.solverstate")
    assert status == 0 and "Resuming from snap_iter_5.solverstate" in glog_messages(err)
    resumed = Net("net.prototxt", phase=caffe_pb2.TRAIN)
    resumed.copy_trained_layers_from("snap_iter_10.caffemodel")
    for a, b in zip(whole.learnable_params, resumed.learnable_params, strict=True):
        np.testing.assert_array_equal(a.cpu_data(), b.cpu_data())


def test_state_from_another_net_is_refused_and_nothing_written(capsys, case_dir):
    with open("other.prototxt", "w") as f:
        f.write(open("net.prototxt").read().replace("num_output: 10", "num_output: 7"))
    with open("other_solver.prototxt", "w") as f:
        f.write(open("solver.prototxt").read().replace('"net.prototxt"', '"other.prototxt"')
                .replace('"snap"', '"other"'))
    assert run_caffe(capsys, "train", "-solver", "other_solver.prototxt")[0] == 0
    status, err = run_caffe(capsys, "train", *SOLVER, "-snapshot", "other_iter_10.solverstate")
    assert status == 1 and "other_iter_10.solverstate: history blob 2 has shape (7, 64)" in err
    assert snapshot_files() == []


@pytest.mark.parametrize(("change", "message"), [
    (('"net.prototxt"', '"missing.prototxt"'), "missing.prototxt: file not found"),
    (('type: "SGD"', 'type: "Fancy"'), "Unknown solver type: 'Fancy'"),
    (('lr_policy: "step"', 'lr_policy: "cosine"'), "Unknown learning rate policy: 'cosine'"),
    (("max_iter: 10", "max_iter: -3"), "max_iter must be >= 0, got -3"),
    (("stepsize: 4", "stepsize: 0"), "lr_policy 'step' needs stepsize > 0"),
])
def test_bad_solver_files_name_the_field(capsys, case_dir, change, message):
    text = open("solver.prototxt").read()
    assert change[0] in text
    with open("solver.prototxt", "w") as f:
        f.write(text.replace(*change))
    status, err = run_caffe(capsys, "train", "-solver", "solver.prototxt")
    assert status == 1 and message in err and snapshot_files() == []


def test_missing_weights_file(capsys, case_dir):
    status, err = run_caffe(capsys, "train", *SOLVER, "-weights", "init.caffemodel,nope.caffemodel")
    assert status == 1 and "nope.caffemodel: file not found" in err and snapshot_files() == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_loss_is_logged_and_stop_on_nan_stops(capsys, case_dir):
    net = Net("net.prototxt", phase=caffe_pb2.TRAIN)
    net.copy_trained_layers_from("init.caffemodel")
    net.layer_by_name("ip").blobs[0].mutable_cpu_data()[...] = np.nan
    net.save("nan.caffemodel")
    status, err = run_caffe(capsys, "train", "-solver", "solver.prototxt", "-weights", "nan.caffemodel")
    assert status == 0 and "Iteration 0, loss = nan is not finite" in glog_messages(err)
    status, err = run_caffe(capsys, "train", *SOLVER, "-weights", "nan.caffemodel", "-stop_on_nan")
    assert status == 1 and "training stopped at iteration 0" in err


@pytest.mark.parametrize(("effect", "expected_iter"), [("stop", 3), ("snapshot", 10)])
def test_sigint_effect(capsys, case_dir, monkeypatch, effect, expected_iter):
    made = []
    original = caffe_cli_train.create_solver

    class InterruptAtIteration2:
        def on_start(self):
            if made[0].iter == 2:
                os.kill(os.getpid(), signal.SIGINT)

        def on_gradients_ready(self):
            pass

    def create(param):
        made.append(original(param))
        made[0].add_callback(InterruptAtIteration2())
        return made[0]

    monkeypatch.setattr(caffe_cli_train, "create_solver", create)
    previous = signal.getsignal(signal.SIGINT)
    status, err = run_caffe(capsys, "train", "-solver", "solver.prototxt", f"-sigint_effect={effect}")
    assert status == 0 and made[0].iter == expected_iter
    assert "snap_iter_3.caffemodel" in snapshot_files()
    assert signal.getsignal(signal.SIGINT) is previous
    if effect == "stop":
        assert "Optimization stopped early." in glog_messages(err)


def test_progress_bar_only_on_a_terminal(capsys, case_dir, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    status, err = run_caffe(capsys, "train", "-solver", "solver.prototxt")
    assert status == 0 and "10/10" in err


def test_gpu_without_a_device_is_a_clear_error(capsys, case_dir, without_gpu):
    status, err = run_caffe(capsys, "train", "-solver", "solver.prototxt", "-gpu", "0")
    assert status == 1 and ("cupy" in err or "CUDA" in err) and snapshot_files() == []


def test_explicit_gpu_solver_mode_asks_for_the_gpu(capsys, case_dir, without_gpu):
    with open("solver.prototxt") as f:
        text = f.read().replace("solver_mode: CPU", "solver_mode: GPU\ndevice_id: 0")
    with open("solver.prototxt", "w") as f:
        f.write(text)
    status, err = run_caffe(capsys, "train", *SOLVER)
    assert status == 1 and ("cupy" in err or "CUDA" in err)
    with open("solver.prototxt", "w") as f:
        f.write(text.replace("solver_mode: GPU\n", ""))
    assert run_caffe(capsys, "train", *SOLVER)[0] == 0


def test_a_launched_rank_trains_on_its_own_gpu(capsys, case_dir, monkeypatch):
    # Under mpiexec every rank trains on gpus[rank % len(gpus)], with its solver's device_id set to it.
    import contextlib
    import types

    seen = {}
    monkeypatch.setattr(caffe_cli_train, "launched_size", lambda: 2)
    monkeypatch.setattr(caffe_cli_train, "join_ranks", lambda: types.SimpleNamespace(rank=1))
    monkeypatch.setattr(caffe_cli_train, "one_job", lambda comm: contextlib.nullcontext())
    monkeypatch.setattr(caffe_cli_train, "use_devices", lambda gpus, what: seen.setdefault("devices", gpus))

    def train_ranks(args, param, actions):
        seen.update(solver=args.solver, device_id=param.device_id)
        return 0

    monkeypatch.setattr(caffe_cli_train, "_train_ranks", train_ranks)
    status, _ = run_caffe(capsys, "train", "-solver", "solver.prototxt", "-gpu", "4,7")
    assert status == 0
    assert seen == {"devices": [7], "solver": "solver.prototxt", "device_id": 7}
