"""The main job end to end: examples/mnist/train_lenet.py trains LeNet on the bundled digits like Caffe.

Caffe's reference run (BVLC Caffe 1.0, CPU, same data, prototxts and initial weights) logged the train
losses and test (accuracy, loss) below; BLAS thread counts alone move Caffe's own losses in the 3rd-4th digit
after a few hundred iterations, so early losses are compared tightly and the final accuracy within half a
point.
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
    for iteration, want in CAFFE_LOSSES.items():
        assert losses[iteration] == pytest.approx(want, rel=1e-3)
    tests: dict[int, dict[str, float]] = {}
    for message in messages:
        if match := re.match(r"Iteration (\d+), Testing net \(#0\)", message):
            outputs = tests.setdefault(int(match.group(1)), {})
        elif match := re.match(r"\s*Test net output #\d+: (\w+) = (\S+)", message):
            outputs[match.group(1)] = float(match.group(2))
    assert sorted(tests) == sorted(CAFFE_TESTS)
    assert tests[0]["accuracy"] == CAFFE_TESTS[0][0]
    assert tests[0]["loss"] == pytest.approx(CAFFE_TESTS[0][1], rel=1e-3)
    assert tests[2000]["accuracy"] == pytest.approx(CAFFE_TESTS[2000][0], abs=0.005)
    assert "Optimization Done." in text


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
