"""Training stays on the device: on the cupy stand-in, a LeNet iteration copies batch up and loss down.

Everything else (forward, backward, clearing diffs, every solver's update, gradient clipping's norm aside)
runs on device arrays; a snapshot copies each weight and history blob down once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text, read_text_file
from caffe_core.solvers.factory import create_solver

pytest.importorskip("caffe_layers_vision")
pytest.importorskip("caffe_layers_std")
pytest.importorskip("caffe_layers_data")

BATCH_BYTES = 64 * 28 * 28 * 4 + 64 * 4
LEARNABLE_BLOBS = 8
RULES = {
    "SGD": "momentum: 0.9", "Nesterov": "momentum: 0.9", "AdaGrad": "momentum: 0 delta: 1e-8",
    "RMSProp": "momentum: 0 rms_decay: 0.98", "AdaDelta": "momentum: 0.95 delta: 1e-6 base_lr: 1",
    "Adam": "momentum: 0.9 momentum2: 0.999 delta: 1e-8 base_lr: 0.001",
}


@pytest.fixture
def mnist_example(mnist_workdir) -> Path:
    """The shared folder holding examples/mnist with its LMDBs."""
    return mnist_workdir.root


def lenet_solver(root: Path, extra: str = ""):
    """Caffe's LeNet solver (run from root), without the initial test, plus `extra` solver fields."""
    param = read_text_file(root / "examples" / "mnist" / "lenet_solver.prototxt", caffe_pb2.SolverParameter())
    param.test_initialization = False
    param.snapshot_prefix = str(root / "lenet")
    parse_text(extra, param, source="<test>")
    return create_solver(param)


def steps(standin, solver, count):
    """Transfers of each of `count` single steps."""
    seen = []
    for _ in range(count):
        before = standin.transfers()
        solver.step(1)
        seen.append(standin.transfers() - before)
    return seen


def test_a_lenet_iteration_copies_the_batch_up_and_the_loss_down(gpu_standin, mnist_example, monkeypatch):
    monkeypatch.chdir(mnist_example)
    solver = lenet_solver(mnist_example)
    solver.step(2)
    for delta in steps(gpu_standin, solver, 3):
        assert (delta.to_device, delta.to_device_bytes) == (2, BATCH_BYTES)
        assert (delta.to_host, delta.to_host_bytes) == (1, 4)


@pytest.mark.parametrize("rule", list(RULES))
def test_every_solver_updates_on_the_device(gpu_standin, mnist_example, monkeypatch, rule):
    monkeypatch.chdir(mnist_example)
    solver = lenet_solver(mnist_example, f'type: "{rule}" {RULES[rule]} regularization_type: "L1"')
    assert solver.type == rule
    solver.step(1)
    weights = solver.net.learnable_params[0]
    before = weights.cpu_data().copy()
    (delta,) = steps(gpu_standin, solver, 1)
    assert delta.copies == 3
    assert not np.array_equal(weights.cpu_data(), before)


def test_clipping_and_iter_size_add_only_the_norm(gpu_standin, mnist_example, monkeypatch):
    monkeypatch.chdir(mnist_example)
    solver = lenet_solver(mnist_example, "clip_gradients: 0.01 iter_size: 2")
    solver.step(1)
    for delta in steps(gpu_standin, solver, 2):
        assert (delta.to_device, delta.to_host) == (4, 3)


def test_a_snapshot_copies_each_blob_down_once(gpu_standin, mnist_example, monkeypatch):
    monkeypatch.chdir(mnist_example)
    solver = lenet_solver(mnist_example)
    solver.step(2)
    before = gpu_standin.transfers()
    solver.snapshot()
    delta = gpu_standin.transfers() - before
    assert (delta.to_device, delta.to_host) == (0, 2 * LEARNABLE_BLOBS)
    assert (mnist_example / "lenet_iter_2.caffemodel").exists()
    (after,) = steps(gpu_standin, solver, 1)
    assert after.copies == 3
