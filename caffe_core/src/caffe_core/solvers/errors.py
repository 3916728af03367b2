"""Errors of solver configuration, solver state files and training."""

from caffe_core.errors import CaffeError


class SolverError(CaffeError):
    """A solver parameter is missing, out of range or inconsistent (the message names the field)."""


class SolverStateError(CaffeError):
    """A .solverstate cannot be restored into this solver (wrong net, wrong type, corrupt file)."""


class NonFiniteLossError(CaffeError):
    """Training stopped because the loss became NaN or infinite (with stop_on_nan)."""
