"""The main job end to end: examples/mnist/train_lenet.py trains LeNet on the bundled digits like Caffe.

Caffe's reference run (BVLC Caffe 1.0, CPU, same data, prototxts and initial weights) logged the train
losses and test (accuracy, loss) below. SGD on LeNet amplifies last-bit rounding about 1e5-fold in 100
iterations, and rounding depends on the CPU's BLAS kernel: Caffe's own runs with AVX2 and AVX-512 kernels
agree to Caffe's printed 6 digits through iteration 50, differ by up to 3% in a loss between iterations 100
and 300, and end within 0.001 of each other in test accuracy. So the first 10 losses are compared within
1e-4, later losses within 5%, and the final accuracy within half a point.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("caffe_layers_vision")
pytest.importorskip("caffe_layers_std")

CAFFE_LOSSES = {0: 2.36465, 100: 0.0776449, 200: 0.136457}
# Caffe's log of the same job with `display: 1`: the losses of iterations 0 to 10.
CAFFE_FIRST_LOSSES = [2.36465, 2.31145, 2.31402, 2.22427, 2.11527, 2.13243, 2.09647, 2.00627, 1.97373,
                      1.92106, 1.87685]
CAFFE_TESTS = {0: (0.074, 2.35127), 500: (0.963, 0.129526), 1000: (0.954, 0.162475),
               1500: (0.968, 0.136287), 2000: (0.970, 0.131555)}


class Lines(logging.Handler):
    """Keeps every formatted message."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def check_against_caffe(messages: list[str]) -> None:
    """The logged losses and test outputs match Caffe's reference run."""
    text = "\n".join(messages)
    losses = {int(i): float(v) for i, v in re.findall(r"Iteration (\d+) \(.*\), loss = (\S+)", text)}
    assert losses[0] == pytest.approx(CAFFE_LOSSES[0], rel=1e-4)
    for iteration in (100, 200):
        assert losses[iteration] == pytest.approx(CAFFE_LOSSES[iteration], rel=0.05)
    tests: dict[int, dict[str, float]] = {}
    for message in messages:
        if match := re.match(r"Iteration (\d+), Testing net \(#0\)", message):
            outputs = tests.setdefault(int(match.group(1)), {})
        elif match := re.match(r"\s*Test net output #\d+: (\w+) = (\S+)", message):
            outputs[match.group(1)] = float(match.group(2))
    assert sorted(tests) == sorted(CAFFE_TESTS)
    assert tests[0]["accuracy"] == CAFFE_TESTS[0][0]
    assert tests[0]["loss"] == pytest.approx(CAFFE_TESTS[0][1], rel=1e-4)
    assert tests[2000]["accuracy"] == pytest.approx(CAFFE_TESTS[2000][0], abs=0.005)
    assert "Optimization Done." in text


def test_the_first_ten_iterations_give_caffes_losses(mnist_workdir, monkeypatch):
    from caffe_core.solvers.factory import create_solver

    monkeypatch.chdir(mnist_workdir.root)
    solver = create_solver(str(mnist_workdir.job.SOLVER))
    solver.net.copy_trained_layers_from(str(mnist_workdir.job.WEIGHTS))
    losses = []
    for _ in CAFFE_FIRST_LOSSES:
        solver.step(1)
        losses.append(float(solver.net.blob_by_name("loss").cpu_data()))
    assert losses == pytest.approx(CAFFE_FIRST_LOSSES, rel=1e-4)


@pytest.mark.slow
def test_lenet_reaches_caffes_accuracy(mnist_copy, tmp_path, monkeypatch):
    example, job = mnist_copy(tmp_path)
    monkeypatch.chdir(tmp_path)
    lines = Lines()
    logger = logging.getLogger("caffe")
    logger.addHandler(lines)
    try:
        assert job.main([]) == 0
    finally:
        logger.removeHandler(lines)
    assert (example / "mnist_train_lmdb" / "data.mdb").exists()
    check_against_caffe(lines.messages)


@pytest.mark.slow
def test_lenet_in_gpu_mode_on_the_stand_in_reaches_caffes_accuracy_within_the_copy_budget(mnist_copy,
                                                                                           tmp_path):
    example, _ = mnist_copy(tmp_path)
    env = {**os.environ, "CAFFE_GPU_STANDIN": "1"}
    done = subprocess.run([sys.executable, str(example / "train_lenet.py"), "--gpu=0"], env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stderr.splitlines()
    messages = [line.split("] ", 1)[1] for line in lines if re.match(r"[IWE]\d{4} .*\] ", line)]
    assert "Use GPU with device ID 0" in messages
    check_against_caffe(messages)
    report = re.fullmatch(r"GPU stand-in transfers: host->device (\d+) \((\d+) bytes\), "
                          r"device->host (\d+) \((\d+) bytes\)", lines[-1])
    assert report, lines[-1]
    up, down = int(report.group(1)), int(report.group(3))
    # 2000 iterations at 3 copies (batch and labels up, loss down), 5 tests of 10 batches at 5 (the same plus
    # two outputs read), and at most 50 more, none of them per iteration: the 8 weight blobs going up once,
    # the 21 displayed outputs, and each layer's geometry constants (pooling's window indices) going up once.
    assert up + down <= 2000 * 3 + 5 * 10 * 5 + 50
