"""What the upgrade tools share: the usage line (exit 1), unparsable input (exit 2, nothing written) and a
missing input (fatal)."""

import pytest

from .conftest import run_console_script


@pytest.mark.parametrize(("tool", "usage"), [
    ("upgrade_net_proto_text", "upgrade_net_proto_text v0_net_proto_file_in net_proto_file_out"),
    ("upgrade_net_proto_binary", "upgrade_net_proto_binary v0_net_proto_file_in net_proto_file_out"),
    ("upgrade_solver_proto_text", "upgrade_solver_proto_text old_solver_proto_file_in solver_proto_file_out"),
])
def test_wrong_argument_count_logs_usage_and_exits_1(tool, usage):
    assert run_console_script(tool, "only_one") == (1, [("E", f"Usage: {usage}")])


def test_unparsable_text_exits_2_naming_line_and_column(tmp_path):
    source, target = tmp_path / "bad.prototxt", tmp_path / "out.prototxt"
    source.write_text("name: 'n'\nlayer {\n  nme: 'x'\n}\n")
    code, log = run_console_script("upgrade_net_proto_text", source, target)
    assert code == 2
    assert log[0][0] == "E" and f"{source}:3:3:" in log[0][1] and 'no field named "nme"' in log[0][1]
    assert log[1] == ("E", f"Failed to parse input text file as NetParameter: {source}")
    assert not target.exists()


def test_missing_input_is_fatal(tmp_path):
    target = tmp_path / "out.prototxt"
    code, log = run_console_script("upgrade_net_proto_text", tmp_path / "none.prototxt", target)
    assert code == 1
    assert log == [("F", f"File not found: {tmp_path / 'none.prototxt'}")]
    assert not target.exists()
