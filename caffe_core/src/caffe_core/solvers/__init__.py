"""Caffe's solvers: the training loop (base), the six update rules, lr policies and the solver factory."""

from caffe_core.solvers.base import Solver, SolverAction
from caffe_core.solvers.errors import NonFiniteLossError, SolverError, SolverStateError
from caffe_core.solvers.factory import create_solver, solver_class, solver_types
from caffe_core.solvers.param_file import read_solver_param

__all__ = ["NonFiniteLossError", "Solver", "SolverAction", "SolverError", "SolverStateError", "create_solver",
           "read_solver_param", "solver_class", "solver_types"]
