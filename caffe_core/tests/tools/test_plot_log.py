"""`caffe plot`: parsing Caffe's training log lines and drawing the chart."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from caffe_core.tools.caffe_cli import main
from caffe_core.tools.plot_log import parse_training_log

GOLDEN = pathlib.Path(__file__).parent.parent / "golden" / "solvers" / "sgd_momentum"

MNIST_EXCERPT = """\
I20261122 06:28:38.851359 30345 solver.cpp:347] Iteration 0, Testing net (#0)
I20261122 06:28:39.103041 30345 solver.cpp:414]     Test net output #0: accuracy = 0.074
I20261122 06:28:39.103114 30345 solver.cpp:414]     Test net output #1: loss = 2.35127 (* 1 = 2.35127 loss)
I1122 06:28:39.141373 30345 solver.cpp:239] Iteration 0 (-4.2039e-45 iter/s, 0.29s/100 iters), loss = 2.36465
I20261122 06:28:39.141448 30345 solver.cpp:258]     Train net output #0: loss = 2.36465 (* 1 = 2.36465 loss)
I20261122 06:28:39.141467 30345 sgd_solver.cpp:112] Iteration 0, lr = 0.01
I20261122 06:28:53.713924 30345 solver.cpp:347] Iteration 500, Testing net (#0)
I20261122 06:28:53.971550 30345 solver.cpp:414]     Test net output #0: accuracy = 0.963
I20261122 06:28:53.971632 30345 solver.cpp:414]     Test net output #1: loss = 0.129526 (* 1 = 0.129526 loss)
I1122 06:28:54.004453 30345 solver.cpp:239] Iteration 500 (25.9471 iter/s, 3.854s/100 iters), loss = 0.0074266
I20261122 06:28:54.004549 30345 sgd_solver.cpp:112] Iteration 500, lr = 0.00964069
I20261122 06:29:34.009246 30345 solver.cpp:327] Iteration 2000, loss = 0.00082584
"""


def test_parses_caffes_own_solver_log():
    parsed = parse_training_log((GOLDEN / "caffe.log").read_text())
    traj = np.load(GOLDEN / "trajectory.npz")
    assert [i for i, _ in parsed.train_loss] == list(range(10))
    np.testing.assert_allclose([v for _, v in parsed.train_loss], traj["loss_logged"])
    np.testing.assert_allclose([v for _, v in parsed.learning_rate], traj["lr_logged"])


def test_parses_test_outputs_and_the_final_loss():
    parsed = parse_training_log(MNIST_EXCERPT)
    assert parsed.tests == {"#0 accuracy": [(0, 0.074), (500, 0.963)],
                            "#0 loss": [(0, 2.35127), (500, 0.129526)]}
    assert parsed.train_loss == [(0, 2.36465), (500, 0.0074266), (2000, 0.00082584)]
    assert parsed.learning_rate == [(0, 0.01), (500, 0.00964069)]


def test_plot_command_writes_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    log = tmp_path / "train.log"
    log.write_text(MNIST_EXCERPT)
    assert main(["plot", str(log), str(tmp_path / "chart.png")]) == 0
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_errors(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("nothing to see\n")
    assert main(["plot", str(tmp_path / "notes.txt"), str(tmp_path / "x.png")]) == 1
    assert "is it a Caffe training log?" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "absent.log"), str(tmp_path / "x.png")]) == 1
    assert "absent.log: log file not found" in capsys.readouterr().err
    assert main(["plot", str(tmp_path / "notes.txt")]) == 1
    assert not (tmp_path / "x.png").exists()
