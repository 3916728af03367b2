"""The core's own implementations of its hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from caffe_core.fillers.base import Filler
    from caffe_core.onnx_export.converters import Converter
    from caffe_core.solvers.base import Solver


@hookimpl
def caffe_fillers() -> dict[str, type[Filler]]:
    """Caffe's seven fillers."""
    from caffe_core.fillers.bilinear import BilinearFiller
    from caffe_core.fillers.constant import ConstantFiller
    from caffe_core.fillers.gaussian import GaussianFiller
    from caffe_core.fillers.msra import MSRAFiller
    from caffe_core.fillers.positive_unitball import PositiveUnitballFiller
    from caffe_core.fillers.uniform import UniformFiller
    from caffe_core.fillers.xavier import XavierFiller

    return {
        "constant": ConstantFiller,
        "uniform": UniformFiller,
        "gaussian": GaussianFiller,
        "positive_unitball": PositiveUnitballFiller,
        "xavier": XavierFiller,
        "msra": MSRAFiller,
        "bilinear": BilinearFiller,
    }


@hookimpl
def caffe_solvers() -> dict[str, type[Solver]]:
    """Caffe's six solver types."""
    from caffe_core.solvers.adadelta import AdaDeltaSolver
    from caffe_core.solvers.adagrad import AdaGradSolver
    from caffe_core.solvers.adam import AdamSolver
    from caffe_core.solvers.nesterov import NesterovSolver
    from caffe_core.solvers.rmsprop import RMSPropSolver
    from caffe_core.solvers.sgd import SGDSolver

    return {
        "SGD": SGDSolver,
        "Nesterov": NesterovSolver,
        "AdaGrad": AdaGradSolver,
        "RMSProp": RMSPropSolver,
        "AdaDelta": AdaDeltaSolver,
        "Adam": AdamSolver,
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """The ONNX converter of Split (Input layers become the graph's inputs)."""
    from caffe_core.onnx_export.core_layers import convert_split

    return {"Split": convert_split}
