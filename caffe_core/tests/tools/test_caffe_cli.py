"""The `caffe` command: flag spellings, Caffe's flag rules, train/test/time output, resume, signals, NaN,
bad input (clear error, exit 1, nothing written) and the glog line format."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.tools import caffe_cli, caffe_cli_train
from caffe_core.tools.caffe_cli import main, normalize_flags

SOLVER = ("-solver", "solver.prototxt")
GLOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] ")


def _run(capsys, *argv: str) -> tuple[int, str]:
    status = main(list(argv))
    return status, capsys.readouterr().err


def _messages(err: str) -> list[str]:
    return [GLOG.sub("", line) for line in err.splitlines() if GLOG.match(line)]


def _snapshots() -> list[str]:
    return sorted(f for f in os.listdir() if f.startswith(("snap_", "resumed_")))


@pytest.mark.parametrize("argv", [["-solver", "s.prototxt"], ["-solver=s.prototxt"], ["--solver=s.prototxt"],
                                  ["--solver", "s.prototxt"]])
def test_flag_spellings(argv):
    args = caffe_cli.build_parser().parse_args(normalize_flags(["train", *argv, "-gpu=", "-level", "2"]))
    assert (args.command, args.solver, args.gpu, args.level) == ("train", "s.prototxt", "", 2)


def test_bool_flag_spellings():
    parse = caffe_cli.build_parser().parse_args
    assert parse(normalize_flags(["train", "-stop_on_nan"])).stop_on_nan is True
    assert parse(normalize_flags(["train", "--stop_on_nan=false"])).stop_on_nan is False


@pytest.mark.parametrize(("argv", "message"), [
    ([], "No command given"),
    (["fly"], "Unknown action: fly"),
    (["train"], "Need a solver definition to train"),
    (["train", "-solver", "s.prototxt", "-snapshot", "a.solverstate", "-weights", "w.caffemodel"],
     "Give a snapshot to resume training or weights to finetune but not both"),
    (["train", "-solver", "s.prototxt", "-sigint_effect", "explode"], 'Invalid signal effect "explode"'),
    (["train", "-solver", "absent.prototxt"], "absent.prototxt: file not found"),
    (["test", "-model", "m.prototxt"], "Need model weights to score"),
    (["test", "-weights", "w.caffemodel"], "Need a model definition to score"),
    (["time"], "Need a model definition to time"),
    (["device_query"], "Need a device ID to query"),
    (["train", "--bogus_flag=1"], "unrecognized arguments: --bogus_flag=1"),
    (["train", "solver.prototxt"], "flags need a leading dash"),
])
def test_usage_errors_exit_1(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status, err = _run(capsys, *argv)
    assert status == 1 and message in err


def test_train_logs_like_caffe(capsys, case_dir):
    status, err = _run(capsys, "train", "-solver=solver.prototxt", "-weights", "init.caffemodel")
    assert status == 0
    assert all(GLOG.match(line) for line in err.splitlines() if line.startswith(("I1", "W1", "E1")))
    messages = _messages(err)
    for expected in ["Use CPU.", "Finetuning from init.caffemodel", "Starting Optimization",
                     "Solving solvernet", "Learning Rate Policy: step", "Iteration 4, lr = 0.025",
                     "Snapshotting to binary proto file snap_iter_10.caffemodel"]:
        assert expected in messages
    text = "\n".join(messages)
    assert re.search(r"^Iteration 0 \(\S+ iter/s, \S+s/1 iters\), loss = [\d.]+$", text, re.M)
    assert re.search(r"^    Train net output #0: loss = ([\d.e-]+) \(\* 1 = \1 loss\)$", text, re.M)
    assert re.search(r"^Iteration 10, loss = [\d.e-]+$", text, re.M)
    assert messages[-2:] == ["Optimization Done.", "Optimization Done."]
    assert _snapshots() == ["snap_iter_10.caffemodel", "snap_iter_10.solverstate"]


def test_resume_from_snapshot_continues_exactly(capsys, case_dir):
    with open("solver.prototxt", "a") as f:
        f.write("snapshot: 5\n")
    assert _run(capsys, "train", "-solver", "solver.prototxt", "-weights", "init.caffemodel")[0] == 0
    whole = Net("net.prototxt", phase=caffe_pb2.TRAIN)
    whole.copy_trained_layers_from("snap_iter_10.caffemodel")
    os.remove("snap_iter_10.caffemodel")
    status, err = _run(capsys, "train", "--solver", "solver.prototxt",
                       "--snapshot", "snap_iter_5.solverstate")
    assert status == 0 and "Resuming from snap_iter_5.solverstate" in _messages(err)
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
    assert _run(capsys, "train", "-solver", "other_solver.prototxt")[0] == 0
    status, err = _run(capsys, "train", *SOLVER, "-snapshot", "other_iter_10.solverstate")
    assert status == 1 and "other_iter_10.solverstate: history blob 2 has shape (7, 64)" in err
    assert _snapshots() == []


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
    status, err = _run(capsys, "train", "-solver", "solver.prototxt")
    assert status == 1 and message in err and _snapshots() == []


def test_missing_weights_file(capsys, case_dir):
    status, err = _run(capsys, "train", *SOLVER, "-weights", "init.caffemodel,nope.caffemodel")
    assert status == 1 and "nope.caffemodel: file not found" in err and _snapshots() == []


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_loss_is_logged_and_stop_on_nan_stops(capsys, case_dir):
    net = Net("net.prototxt", phase=caffe_pb2.TRAIN)
    net.copy_trained_layers_from("init.caffemodel")
    net.layer_by_name("ip").blobs[0].mutable_cpu_data()[...] = np.nan
    net.save("nan.caffemodel")
    status, err = _run(capsys, "train", "-solver", "solver.prototxt", "-weights", "nan.caffemodel")
    assert status == 0 and "Iteration 0, loss = nan is not finite" in _messages(err)
    status, err = _run(capsys, "train", *SOLVER, "-weights", "nan.caffemodel", "-stop_on_nan")
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
    status, err = _run(capsys, "train", "-solver", "solver.prototxt", f"-sigint_effect={effect}")
    assert status == 0 and made[0].iter == expected_iter
    assert "snap_iter_3.caffemodel" in _snapshots()
    assert signal.getsignal(signal.SIGINT) is previous
    if effect == "stop":
        assert "Optimization stopped early." in _messages(err)


def test_progress_bar_only_on_a_terminal(capsys, case_dir, monkeypatch):
    pytest.importorskip("tqdm")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    status, err = _run(capsys, "train", "-solver", "solver.prototxt")
    assert status == 0 and "10/10" in err


def test_console_script_writes_a_clean_log_file(case_dir):
    with open("train.log", "w") as log_file:
        status = subprocess.run([sys.executable, "-m", "caffe_core.tools.caffe_cli", "train",
                                 "-solver", "solver.prototxt"], stderr=log_file, check=False).returncode
    lines = open("train.log").read().splitlines()
    assert status == 0 and any(GLOG.match(line) for line in lines)
    assert not any("iter/s]" in line or "\r" in line for line in lines)


def test_test_command(capsys, case_dir):
    status, err = _run(capsys, "test", "-model", "net.prototxt", "-weights", "init.caffemodel",
                       "-iterations", "2")
    messages = _messages(err)
    assert status == 0 and "Running for 2 iterations." in messages
    batch = [m for m in messages if m.startswith("Batch 0, loss = ")]
    loss = float(batch[0].rsplit("= ", 1)[1])
    assert f"Loss: {loss:g}" in messages and f"loss = {loss:g} (* 1 = {loss:g} loss)" in messages


def test_time_command(capsys, case_dir):
    status, err = _run(capsys, "time", "-model", "net.prototxt", "-iterations", "3", "-phase", "TRAIN")
    messages = _messages(err)
    assert status == 0 and "*** Benchmark begins ***" in messages and messages[-1] == "*** Benchmark ends ***"
    assert "Iteration: 3 forward-backward time: " in "\n".join(messages)
    for name in ("data", "conv", "relu", "ip", "loss"):
        assert any(re.fullmatch(rf" *{name}\tforward: [\d.e-]+ ms\.", m) for m in messages)
        assert any(re.fullmatch(rf" *{name}\tbackward: [\d.e-]+ ms\.", m) for m in messages)
    assert any(m.startswith("Average Forward-Backward: ") for m in messages)
    assert _run(capsys, "time", "-model", "net.prototxt", "-phase", "VAL")[0] == 1


def _skip_if_a_gpu_is_present() -> None:
    try:
        import cupy

        present = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        present = False
    if present:
        pytest.skip("a GPU is present")


def test_gpu_without_a_device_is_a_clear_error(capsys, case_dir):
    _skip_if_a_gpu_is_present()
    status, err = _run(capsys, "train", "-solver", "solver.prototxt", "-gpu", "0")
    assert status == 1 and ("cupy" in err or "CUDA" in err) and _snapshots() == []


def test_explicit_gpu_solver_mode_asks_for_the_gpu(capsys, case_dir):
    _skip_if_a_gpu_is_present()
    with open("solver.prototxt") as f:
        text = f.read().replace("solver_mode: CPU", "solver_mode: GPU\ndevice_id: 0")
    with open("solver.prototxt", "w") as f:
        f.write(text)
    status, err = _run(capsys, "train", *SOLVER)
    assert status == 1 and ("cupy" in err or "CUDA" in err)
    with open("solver.prototxt", "w") as f:
        f.write(text.replace("solver_mode: GPU\n", ""))
    assert _run(capsys, "train", *SOLVER)[0] == 0
