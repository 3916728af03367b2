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


def test_upgrade_logs_caffes_lines(caffe_log):
    solver = caffe_pb2.SolverParameter(solver_type=caffe_pb2.SolverParameter.ADAM)
    assert solver_type.upgrade_solver_as_needed(solver, "old_solver.prototxt")
    assert [(r.levelname, r.getMessage()) for r in caffe_log.records] == [
        ("INFO", "Attempting to upgrade input file specified using deprecated 'solver_type' field (enum)': "
                 "old_solver.prototxt"),
        ("INFO", "Successfully upgraded file specified using deprecated 'solver_type' field (enum) to 'type' "
                 "field (string)."),
        ("WARNING", "Note that future Caffe releases will only support 'type' field (string) for a "
                    "solver's type."),
    ]
