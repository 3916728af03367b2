"""The deprecated `solver_type` enum becomes the `type` string, as Caffe's UpgradeSolverType."""

from __future__ import annotations

import logging

from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.upgrade")

TYPE_NAMES = {
    caffe_pb2.SolverParameter.SGD: "SGD",
    caffe_pb2.SolverParameter.NESTEROV: "Nesterov",
    caffe_pb2.SolverParameter.ADAGRAD: "AdaGrad",
    caffe_pb2.SolverParameter.RMSPROP: "RMSProp",
    caffe_pb2.SolverParameter.ADADELTA: "AdaDelta",
    caffe_pb2.SolverParameter.ADAM: "Adam",
}


def needs(param: caffe_pb2.SolverParameter) -> bool:
    """Whether the solver still names its type with the deprecated enum."""
    return param.HasField("solver_type")


def upgrade(param: caffe_pb2.SolverParameter, source: str = "<solver>") -> None:
    """Moves solver_type into type; both set at once is an error, as in Caffe."""
    if param.HasField("type"):
        raise PrototxtError(f"{source}: Failed to upgrade solver: old solver_type field (enum) and new type "
                            f"field (string) cannot be both specified in solver proto text.")
    param.type = TYPE_NAMES[param.solver_type]
    param.ClearField("solver_type")


def upgrade_solver_as_needed(param: caffe_pb2.SolverParameter, source: str = "<solver>") -> bool:
    """Upgrades a SolverParameter in place; returns True when the deprecated enum was converted."""
    if not needs(param):
        return False
    log.info("Attempting to upgrade input file specified using deprecated 'solver_type' field (enum)': %s",
             source)
    upgrade(param, source)
    log.info("Successfully upgraded file specified using deprecated 'solver_type' field (enum) "
             "to 'type' field (string).")
    log.warning("Note that future Caffe releases will only support 'type' field (string) for a "
                "solver's type.")
    return True
