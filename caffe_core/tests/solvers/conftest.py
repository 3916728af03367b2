"""A tiny learnable test layer and helpers that write solver/net files, for the solver tests.

`TestQuadratic` has one learnable blob w (stored in the prototxt) and no bottoms; its top is the loss
0.5·Σw², so the gradient is w itself and every solver's trajectory can be derived by hand.
"""

from __future__ import annotations

import os
import types
from collections.abc import Iterator

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.layer import Layer

W0 = (1.0, 2.0, -1.5, 0.0)


class QuadraticLayer(Layer):
    """top = 0.5·Σw² (a loss); d top / d w = w."""

    type = "TestQuadratic"
    exact_num_bottom_blobs = 0
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        if not self.layer_param.loss_weight:
            self.layer_param.loss_weight.append(1.0)

    def reshape(self, bottom, top):
        top[0].reshape(())

    def forward_cpu(self, bottom, top):
        w = self.blobs[0].cpu_data()
        top[0].mutable_cpu_data()[...] = 0.5 * np.dot(w.ravel(), w.ravel())

    def backward_cpu(self, top, propagate_down, bottom):
        if self.param_propagate_down(0):
            self.blobs[0].mutable_cpu_diff()[...] += top[0].cpu_diff() * self.blobs[0].cpu_data()


@pytest.fixture(autouse=True)
def quadratic_layer() -> Iterator[None]:
    registry.register_layer("TestQuadratic", QuadraticLayer)
    yield
    registry.unregister_layer("TestQuadratic")


def net_text(w0=W0, param_spec: str = "") -> str:
    """A net of one TestQuadratic layer holding w0."""
    values = " ".join(f"data: {v}" for v in w0)
    return (f'name: "quad"\nlayer {{ name: "q" type: "TestQuadratic" top: "loss" {param_spec}\n'
            f'  blobs {{ shape {{ dim: {len(w0)} }} {values} }} }}\n')


def write_case(directory: os.PathLike, solver: str, net: str | None = None) -> str:
    """Writes net.prototxt and solver.prototxt into directory; returns the solver path."""
    directory = os.fspath(directory)
    with open(os.path.join(directory, "net.prototxt"), "w") as f:
        f.write(net if net is not None else net_text())
    path = os.path.join(directory, "solver.prototxt")
    with open(path, "w") as f:
        f.write(solver)
    return path


BASE_SOLVER = ('net: "net.prototxt"\nbase_lr: 0.1\nlr_policy: "fixed"\nmax_iter: 4\ndisplay: 1\n'
               'snapshot_prefix: "snap"\nsolver_mode: CPU\n')


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> str:
    """Runs the test inside tmp_path (solver files use paths relative to the cwd, as Caffe)."""
    monkeypatch.chdir(tmp_path)
    return str(tmp_path)


@pytest.fixture
def quad() -> types.SimpleNamespace:
    """The helpers above, for test modules (conftest modules cannot be imported by name)."""
    return types.SimpleNamespace(W0=W0, BASE_SOLVER=BASE_SOLVER, net_text=net_text, write_case=write_case)
