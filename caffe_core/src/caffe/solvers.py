"""pycaffe's solvers: `caffe.SGDSolver(file)` ... `caffe.get_solver(file)`, with pycaffe's members."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import cast

from caffe.pycaffe import Net
from caffe_core.proto import caffe_pb2
from caffe_core.solvers import base as core_base
from caffe_core.solvers.adadelta import AdaDeltaSolver as CoreAdaDelta
from caffe_core.solvers.adagrad import AdaGradSolver as CoreAdaGrad
from caffe_core.solvers.adam import AdamSolver as CoreAdam
from caffe_core.solvers.factory import solver_class
from caffe_core.solvers.nesterov import NesterovSolver as CoreNesterov
from caffe_core.solvers.param_file import read_solver_param
from caffe_core.solvers.rmsprop import RMSPropSolver as CoreRMSProp
from caffe_core.solvers.sgd import SGDSolver as CoreSGD


class _FunctionCallback:
    """Adapts pycaffe's pair of functions to a solver callback object."""

    def __init__(self, on_start: Callable[[], None], on_gradients_ready: Callable[[], None]) -> None:
        self.on_start = on_start
        self.on_gradients_ready = on_gradients_ready


class SGDSolver:
    """pycaffe's SGDSolver; the subclasses pick the other update rules."""

    core_class: type[core_base.Solver] = CoreSGD

    def __init__(self, filename: str | os.PathLike | caffe_pb2.SolverParameter) -> None:
        self._attach(self.core_class(filename))

    @classmethod
    def wrap(cls, core: core_base.Solver) -> SGDSolver:
        """A pycaffe view of an existing core solver."""
        view = cls.__new__(cls)
        view._attach(core)
        return view

    def _attach(self, core: core_base.Solver) -> None:
        self._solver = core
        self._net = Net.wrap(core.net)
        self._test_nets = [Net.wrap(net) for net in core.test_nets]

    @property
    def core(self) -> core_base.Solver:
        """The caffe_core solver behind this view."""
        return self._solver

    @property
    def net(self) -> Net:
        """The train net."""
        return self._net

    @property
    def test_nets(self) -> list[Net]:
        """The test nets, in Caffe's order."""
        return list(self._test_nets)

    @property
    def iter(self) -> int:
        """The number of updates done so far."""
        return self._solver.iter

    @property
    def param(self) -> caffe_pb2.SolverParameter:
        """The live SolverParameter (writing base_lr changes the next updates)."""
        return self._solver.param

    @property
    def lr(self) -> float:
        """The current learning rate (advances the multistep state, as pycaffe's)."""
        return self._solver.get_learning_rate()  # type: ignore[attr-defined]  # SGDSolver's, as Caffe's

    def solve(self, resume_file: str | os.PathLike | None = None) -> None:
        """Trains to max_iter, resuming from a .solverstate when given."""
        self._solver.solve(resume_file)

    def step(self, iters: int) -> None:
        """Runs iters iterations."""
        self._solver.step(iters)

    def restore(self, state_file: str | os.PathLike) -> None:
        """Restores a .solverstate or .solverstate.h5."""
        self._solver.restore(state_file)

    def snapshot(self) -> None:
        """Writes <prefix>_iter_<iter>.caffemodel and .solverstate."""
        self._solver.snapshot()

    def apply_update(self) -> None:
        """Applies one update from the current gradients (no forward/backward, no iter increment)."""
        self._solver.apply_update()

    def share_weights(self, net: Net) -> None:
        """Makes another net share this solver's train net weights."""
        net.core.share_trained_layers_with(self._solver.net)

    def add_callback(self, on_start: core_base.SolverCallback | Callable[[], None],
                     on_gradients_ready: Callable[[], None] | None = None) -> None:
        """add_callback(on_start, on_gradients_ready), or add_callback(obj) with both methods."""
        if on_gradients_ready is None:
            self._solver.add_callback(cast(core_base.SolverCallback, on_start))
        else:
            on_start_function = cast(Callable[[], None], on_start)
            self._solver.add_callback(_FunctionCallback(on_start_function, on_gradients_ready))


class NesterovSolver(SGDSolver):
    """pycaffe's NesterovSolver."""

    core_class = CoreNesterov


class AdaGradSolver(SGDSolver):
    """pycaffe's AdaGradSolver."""

    core_class = CoreAdaGrad


class RMSPropSolver(SGDSolver):
    """pycaffe's RMSPropSolver."""

    core_class = CoreRMSProp


class AdaDeltaSolver(SGDSolver):
    """pycaffe's AdaDeltaSolver."""

    core_class = CoreAdaDelta


class AdamSolver(SGDSolver):
    """pycaffe's AdamSolver."""

    core_class = CoreAdam


def get_solver(filename: str | os.PathLike) -> SGDSolver:
    """Creates the solver type named in a solver prototxt (plugins' types included), as its pycaffe class."""
    param = read_solver_param(filename)
    core = solver_class(param.type)(param)
    classes: list[type[SGDSolver]] = [SGDSolver, *SGDSolver.__subclasses__()]
    views = {cls.core_class: cls for cls in classes}
    return views.get(type(core), SGDSolver).wrap(core)
