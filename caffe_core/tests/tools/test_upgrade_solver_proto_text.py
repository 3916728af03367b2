"""upgrade_solver_proto_text: solver_type (enum) becomes type (string); current or conflicting solvers."""

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2

from .conftest import UPGRADE_FIXTURES, run_console_script


def test_solver_tool_turns_the_enum_into_the_type_string(tmp_path):
    base = (UPGRADE_FIXTURES / "solver_type_base.prototxt").read_text()
    source, target = tmp_path / "solver.prototxt", tmp_path / "new_solver.prototxt"
    source.write_text(base + "solver_type: NESTEROV\n")
    code, log = run_console_script("upgrade_solver_proto_text", source, target)
    assert code == 0
    assert log[-4:] == [
        ("I", f"Attempting to upgrade input file specified using deprecated 'solver_type' field (enum)': "
              f"{source}"),
        ("I", "Successfully upgraded file specified using deprecated 'solver_type' field (enum) to 'type' "
              "field (string)."),
        ("W", "Note that future Caffe releases will only support 'type' field (string) for a solver's type."),
        ("I", f"Wrote upgraded SolverParameter text proto to {target}"),
    ]
    expected = proto_io.parse_text(base + "type: 'Nesterov'\n", caffe_pb2.SolverParameter())
    assert proto_io.read_text_file(target, caffe_pb2.SolverParameter()) == expected


def test_solver_tool_on_a_current_solver_and_on_a_conflicting_one(tmp_path):
    base = (UPGRADE_FIXTURES / "solver_type_base.prototxt").read_text()
    current, conflicting = tmp_path / "current.prototxt", tmp_path / "both.prototxt"
    current.write_text(base + "type: 'Adam'\n")
    conflicting.write_text(base + "type: 'Adam'\nsolver_type: SGD\n")
    code, log = run_console_script("upgrade_solver_proto_text", current, tmp_path / "out.prototxt")
    assert code == 0 and log[0] == ("E", f"File already in latest proto format: {current}")
    code, log = run_console_script("upgrade_solver_proto_text", conflicting, tmp_path / "out2.prototxt")
    assert code == 1 and log[-1][0] == "F" and "cannot be both specified" in log[-1][1]
    assert not (tmp_path / "out2.prototxt").exists()
