"""pycaffe-compatible interface: `import caffe` works as it does with BVLC Caffe's Python package."""

import logging

# First, so that caffe_core's OpenBLAS setting comes before numpy loads OpenBLAS.
import caffe_core  # noqa: F401
from caffe import io
from caffe.classifier import Classifier
from caffe.detector import Detector
from caffe.net_spec import NetSpec, layers, params, to_proto
from caffe.parallel import (
    NCCL,
    has_nccl,
    set_multiprocess,
    set_solver_count,
    set_solver_rank,
    solver_count,
    solver_rank,
)
from caffe.pycaffe import Net
from caffe.python_layer_base import Layer
from caffe.solvers import (
    AdaDeltaSolver,
    AdaGradSolver,
    AdamSolver,
    NesterovSolver,
    RMSPropSolver,
    SGDSolver,
    get_solver,
)
from caffe.timer import Timer
from caffe_core import CAFFE_VERSION
from caffe_core import registry as _registry
from caffe_core.logs import init_log as _init_log
from caffe_core.proto.caffe_pb2 import TEST, TRAIN
from caffe_core.runtime import set_device, set_mode_cpu, set_mode_gpu, set_random_seed

__version__ = CAFFE_VERSION


def layer_type_list() -> list[str]:
    """Every layer type the installed packs provide."""
    return _registry.layer_types()


def init_log(level: int = 0, stderr: bool = True) -> None:
    """Starts Caffe-style logging (always to stderr); level is glog's minloglevel: 0 INFO ... 3 FATAL."""
    _init_log({0: logging.INFO, 1: logging.WARNING, 2: logging.ERROR}.get(level, logging.CRITICAL))


def log(message: str) -> None:
    """Writes one INFO line to the Caffe log."""
    logging.getLogger("caffe").info(message)


__all__ = ["AdaDeltaSolver", "AdaGradSolver", "AdamSolver", "Net", "NesterovSolver", "RMSPropSolver",
           "SGDSolver", "get_solver",
           "TEST", "TRAIN", "init_log", "layer_type_list", "log", "set_device", "set_mode_cpu",
           "set_mode_gpu", "set_random_seed", "__version__", "Layer",
           "NCCL", "Classifier", "Detector", "NetSpec", "Timer", "has_nccl", "io", "layers", "params",
           "set_multiprocess", "set_solver_count", "set_solver_rank", "solver_count", "solver_rank",
           "to_proto"]
