"""Caffe's SolverTypeUpgradeTest.TestSimple: each solver_type enum becomes its type string."""

from pathlib import Path

import pytest

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import solver_type

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize(("old", "new"), [("SGD", "SGD"), ("NESTEROV", "Nesterov"), ("ADAGRAD", "AdaGrad"),
                                          ("RMSPROP", "RMSProp"), ("ADADELTA", "AdaDelta"),
                                          ("ADAM", "Adam")])
def test_solver_type_enum_becomes_type_string(old, new):
    base = (FIXTURES / "solver_type_base.prototxt").read_text()
    solver = proto_io.parse_text(base + f"solver_type: {old}\n", caffe_pb2.SolverParameter())
    expected = proto_io.parse_text(base + f"type: '{new}'\n", caffe_pb2.SolverParameter())
    assert solver_type.upgrade_solver_as_needed(solver, "lenet_solver.prototxt")
    assert solver == expected
