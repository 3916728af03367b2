"""The upgrade_* console scripts: Caffe's arguments, log lines, exit codes and upgraded output."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2

FIXTURES = Path(__file__).resolve().parents[1] / "upgrade" / "fixtures"
BIN = Path(sys.executable).parent
GLOG = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ \S+:\d+\] (.*)$")

V0_NOTE = ("Note that future Caffe releases will not support V0NetParameter; use "
           "./build/tools/upgrade_net_proto_text for prototxt and ./build/tools/upgrade_net_proto_binary for "
           "model weights upgrade this and any other net protos to the new format.")


def run(tool: str, *args) -> tuple[int, list[tuple[str, str]]]:
    """Runs an installed console script; returns its exit code and its (level, message) log lines."""
    done = subprocess.run([str(BIN / tool), *map(str, args)], capture_output=True, text=True, timeout=60)
    lines = []
    for line in done.stderr.splitlines():
        match = GLOG.match(line)
        assert match, f"not a glog line: {line!r}"
        lines.append((match.group(1), match.group(2)))
    return done.returncode, lines


def read_net(path) -> caffe_pb2.NetParameter:
    return proto_io.read_text_file(path, caffe_pb2.NetParameter())


def test_text_tool_upgrades_a_v0_net_to_v2(tmp_path):
    source, target = FIXTURES / "v0_simple.prototxt", tmp_path / "new.prototxt"
    code, log = run("upgrade_net_proto_text", source, target)
    assert code == 0
    assert log == [
        ("I", f"Attempting to upgrade input file specified using deprecated V0LayerParameter: {source}"),
        ("I", "Successfully upgraded file specified using deprecated V0LayerParameter"),
        ("W", V0_NOTE),
        ("I", f"Attempting to upgrade input file specified using deprecated V1LayerParameter: {source}"),
        ("I", "Successfully upgraded file specified using deprecated V1LayerParameter"),
        ("I", f"Wrote upgraded NetParameter text proto to {target}"),
    ]
    assert read_net(target) == read_net(FIXTURES / "v2_simple.prototxt")


def test_text_tool_on_a_current_net_says_so_and_copies_it(tmp_path):
    source, target = FIXTURES / "v2_imagenet.prototxt", tmp_path / "same.prototxt"
    code, log = run("upgrade_net_proto_text", source, target)
    assert code == 0
    assert log == [("E", f"File already in latest proto format: {source}"),
                   ("I", f"Wrote upgraded NetParameter text proto to {target}")]
    assert read_net(target) == read_net(source)


def test_text_tool_reports_incompatible_fields_with_exit_1(tmp_path):
    source, target = tmp_path / "odd.prototxt", tmp_path / "out.prototxt"
    source.write_text("layers { layer { name: 'r' type: 'relu' group: 2 } top: 'y' }\n")
    code, log = run("upgrade_net_proto_text", source, target)
    assert code == 1
    assert ("E", "Unknown parameter group for layer type relu") in log
    assert ("E", "Encountered error(s) while upgrading prototxt; see details above.") in log
    assert read_net(target).layer[0].type == "ReLU"


@pytest.mark.parametrize(("tool", "usage"), [
    ("upgrade_net_proto_text", "upgrade_net_proto_text v0_net_proto_file_in net_proto_file_out"),
    ("upgrade_net_proto_binary", "upgrade_net_proto_binary v0_net_proto_file_in net_proto_file_out"),
    ("upgrade_solver_proto_text", "upgrade_solver_proto_text old_solver_proto_file_in solver_proto_file_out"),
])
def test_wrong_argument_count_logs_usage_and_exits_1(tool, usage):
    assert run(tool, "only_one") == (1, [("E", f"Usage: {usage}")])


def test_unparsable_text_exits_2_naming_line_and_column(tmp_path):
    source, target = tmp_path / "bad.prototxt", tmp_path / "out.prototxt"
    source.write_text("name: 'n'\nlayer {\n  nme: 'x'\n}\n")
    code, log = run("upgrade_net_proto_text", source, target)
    assert code == 2
    assert log[0][0] == "E" and f"{source}:3:3:" in log[0][1] and 'no field named "nme"' in log[0][1]
    assert log[1] == ("E", f"Failed to parse input text file as NetParameter: {source}")
    assert not target.exists()


def test_missing_input_is_fatal(tmp_path):
    code, log = run("upgrade_net_proto_text", tmp_path / "none.prototxt", tmp_path / "out.prototxt")
    assert code == 1
    assert log == [("F", f"File not found: {tmp_path / 'none.prototxt'}")]


def test_binary_tool_upgrades_a_v0_caffemodel(tmp_path):
    source, target = tmp_path / "old.caffemodel", tmp_path / "new.caffemodel"
    old = read_net(FIXTURES / "v0_imagenet.prototxt")
    old.layers[1].layer.blobs.add().data.extend([0.5, -1.0])  # conv1 weights travel with the layer
    proto_io.write_binary_file(source, old)
    code, log = run("upgrade_net_proto_binary", source, target)
    assert code == 0
    assert log[-1] == ("I", f"Wrote upgraded NetParameter binary proto to {target}")
    attempt = f"Attempting to upgrade input file specified using deprecated V0LayerParameter: {source}"
    assert ("I", attempt) in log
    upgraded = proto_io.read_binary_file(target, caffe_pb2.NetParameter())
    assert list(upgraded.layer[1].blobs[0].data) == [0.5, -1.0]
    del upgraded.layer[1].blobs[:]
    assert upgraded == read_net(FIXTURES / "v2_imagenet.prototxt")


def test_binary_tool_rejects_a_corrupt_file_with_exit_2(tmp_path):
    source = tmp_path / "cut.caffemodel"
    data = read_net(FIXTURES / "v2_simple.prototxt").SerializeToString()
    source.write_bytes(data[: len(data) // 2])
    code, log = run("upgrade_net_proto_binary", source, tmp_path / "out.caffemodel")
    assert code == 2
    assert log[-1] == ("E", f"Failed to parse input binary file as NetParameter: {source}")


def test_binary_tool_takes_an_empty_file_as_an_empty_net(tmp_path):
    source, target = tmp_path / "empty.caffemodel", tmp_path / "out.caffemodel"
    source.write_bytes(b"")
    code, log = run("upgrade_net_proto_binary", source, target)
    assert code == 0
    assert log[0] == ("E", f"File already in latest proto format: {source}")
    assert target.read_bytes() == b""


def test_solver_tool_turns_the_enum_into_the_type_string(tmp_path):
    base = (FIXTURES / "solver_type_base.prototxt").read_text()
    source, target = tmp_path / "solver.prototxt", tmp_path / "new_solver.prototxt"
    source.write_text(base + "solver_type: NESTEROV\n")
    code, log = run("upgrade_solver_proto_text", source, target)
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
    base = (FIXTURES / "solver_type_base.prototxt").read_text()
    current, conflicting = tmp_path / "current.prototxt", tmp_path / "both.prototxt"
    current.write_text(base + "type: 'Adam'\n")
    conflicting.write_text(base + "type: 'Adam'\nsolver_type: SGD\n")
    code, log = run("upgrade_solver_proto_text", current, tmp_path / "out.prototxt")
    assert code == 0 and log[0] == ("E", f"File already in latest proto format: {current}")
    code, log = run("upgrade_solver_proto_text", conflicting, tmp_path / "out2.prototxt")
    assert code == 1 and log[-1][0] == "F" and "cannot be both specified" in log[-1][1]
    assert not (tmp_path / "out2.prototxt").exists()
