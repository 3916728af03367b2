"""The solver factory: Caffe's six types through the core's caffe_solvers hook, plugins adding more."""

import sys
import types

import pytest

from caffe_core.hookspecs import hookimpl
from caffe_core.plugins import register_plugin, unregister_plugin
from caffe_core.solvers import SolverError, create_solver, solver_types
from caffe_core.solvers.sgd import SGDSolver


def test_the_six_builtin_types():
    assert {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"} <= set(solver_types())


def test_type_picks_the_class(quad, in_tmp):
    solver = create_solver(quad.write_case(in_tmp, quad.BASE_SOLVER + 'type: "Nesterov"\n'))
    assert type(solver).__name__ == "NesterovSolver" and solver.type == "Nesterov"


def test_unknown_type_lists_the_known_ones(quad, in_tmp):
    with pytest.raises(SolverError, match="Unknown solver type: 'Adamm' .*Did you mean 'Adam'"):
        create_solver(quad.write_case(in_tmp, quad.BASE_SOLVER + 'type: "Adamm"\n'))


def test_a_plugin_adds_a_solver_type(quad, in_tmp):
    class SignSGDSolver(SGDSolver):
        type = "SignSGD"

        def compute_update_value(self, side, param_id, rate):
            diff = self.net.learnable_params[param_id].mutable_diff_on(side)
            diff[...] = rate * side.xp.sign(diff)

    plugin = types.ModuleType("sign_sgd_plugin")
    plugin.caffe_solvers = hookimpl(lambda: {"SignSGD": SignSGDSolver})
    sys.modules[plugin.__name__] = plugin
    register_plugin(plugin, name="sign-sgd")
    try:
        solver = create_solver(quad.write_case(in_tmp, quad.BASE_SOLVER + 'type: "SignSGD"\n'))
        solver.step(1)
        assert list(solver.net.layers[0].blobs[0].cpu_data()) == pytest.approx([0.9, 1.9, -1.4, 0.0])
    finally:
        unregister_plugin(plugin)
        del sys.modules[plugin.__name__]
