"""The solver registry: solver classes by `type`, from every plugin's `caffe_solvers` hook."""

from __future__ import annotations

import difflib
import os

from caffe_core.proto import caffe_pb2
from caffe_core.solvers.base import Solver
from caffe_core.solvers.errors import SolverError
from caffe_core.solvers.param_file import read_solver_param


def solver_types() -> dict[str, type[Solver]]:
    """Every installed solver class by type name (Caffe's six plus any plugin's)."""
    from caffe_core.plugins import collect

    return collect("caffe_solvers")


def solver_class(type_name: str) -> type[Solver]:
    """The class of a solver type; an unknown type is an error listing the known ones."""
    types = solver_types()
    if type_name not in types:
        close = difflib.get_close_matches(type_name, list(types), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise SolverError(f"Unknown solver type: '{type_name}' (known types: "
                          f"{', '.join(sorted(types))}).{hint}")
    return types[type_name]


def create_solver(param: caffe_pb2.SolverParameter | str | os.PathLike) -> Solver:
    """Builds the solver a SolverParameter (or solver prototxt) names in its `type`."""
    if not isinstance(param, caffe_pb2.SolverParameter):
        param = read_solver_param(param)
    return solver_class(param.type)(param)
