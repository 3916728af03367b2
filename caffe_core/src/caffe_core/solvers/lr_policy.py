"""Caffe's learning-rate policies (SGDSolver::GetLearningRate): the rate of update `iter`.

Each policy takes the solver parameter, the iteration and the current step, and returns the rate
(rounded to float32, as Caffe's Dtype) and the new current step (saved in .solverstate).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np

from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverError

log = logging.getLogger("caffe.solver")

Policy = Callable[[caffe_pb2.SolverParameter, int, int], tuple[float, int]]


def _fixed(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    return param.base_lr, current_step


def _step(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    current_step = iteration // param.stepsize
    return param.base_lr * math.pow(param.gamma, current_step), current_step


def _exp(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    return param.base_lr * math.pow(param.gamma, iteration), current_step


def _inv(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    base = float(np.float32(1.0) + np.float32(param.gamma) * np.float32(iteration))
    return param.base_lr * math.pow(base, -param.power), current_step


def _multistep(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    if current_step < len(param.stepvalue) and iteration >= param.stepvalue[current_step]:
        current_step += 1
        log.info("MultiStep Status: Iteration %d, step = %d", iteration, current_step)
    return param.base_lr * math.pow(param.gamma, current_step), current_step


def _poly(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    fraction = float(np.float32(1.0) - np.float32(iteration) / np.float32(param.max_iter))
    return param.base_lr * math.pow(fraction, param.power), current_step


def _sigmoid(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    exponent = -param.gamma * (iteration - param.stepsize)
    return param.base_lr / (1.0 + math.exp(min(exponent, 700.0))), current_step


POLICIES: dict[str, Policy] = {
    "fixed": _fixed,
    "step": _step,
    "exp": _exp,
    "inv": _inv,
    "multistep": _multistep,
    "poly": _poly,
    "sigmoid": _sigmoid,
}

# The policies whose formula Caffe guards with CHECK_GE(gamma, 0) / CHECK_GT(stepsize, 0); sigmoid and
# multistep have no such checks (a negative sigmoid gamma is how its decay is written).
GAMMA_POLICIES = ("step", "exp", "inv")
STEPSIZE_POLICIES = ("step",)


def check_policy(param: caffe_pb2.SolverParameter) -> None:
    """Rejects an unknown policy or the values Caffe CHECKs for it, naming the field."""
    policy = param.lr_policy
    if policy not in POLICIES:
        raise SolverError(f"Unknown learning rate policy: '{policy}' (lr_policy must be one of "
                          f"{', '.join(POLICIES)})")
    if policy in GAMMA_POLICIES and param.gamma < 0:
        raise SolverError(f"lr_policy '{policy}' needs gamma >= 0, got {param.gamma:g}")
    if policy in STEPSIZE_POLICIES and param.stepsize <= 0:
        raise SolverError(f"lr_policy '{policy}' needs stepsize > 0, got {param.stepsize}")
    if policy == "poly" and param.max_iter <= 0:
        raise SolverError(f"lr_policy 'poly' needs max_iter > 0, got {param.max_iter}")


def learning_rate(param: caffe_pb2.SolverParameter, iteration: int, current_step: int) -> tuple[float, int]:
    """The float32 rate of update `iteration` and the updated current step."""
    check_policy(param)
    rate, current_step = POLICIES[param.lr_policy](param, iteration, current_step)
    return float(np.float32(rate)), current_step
