"""upgrade_net_proto_text: Caffe's log lines, exit codes and the upgraded prototxt."""

from .conftest import UPGRADE_FIXTURES, read_net_text, run_console_script

V0_NOTE = ("Note that future Caffe releases will not support V0NetParameter; use "
           "./build/tools/upgrade_net_proto_text for prototxt and ./build/tools/upgrade_net_proto_binary for "
           "model weights upgrade this and any other net protos to the new format.")


def test_text_tool_upgrades_a_v0_net_to_v2(tmp_path):
    source, target = UPGRADE_FIXTURES / "v0_simple.prototxt", tmp_path / "new.prototxt"
    code, log = run_console_script("upgrade_net_proto_text", source, target)
    assert code == 0
    assert log == [
        ("I", f"Attempting to upgrade input file specified using deprecated V0LayerParameter: {source}"),
        ("I", "Successfully upgraded file specified using deprecated V0LayerParameter"),
        ("W", V0_NOTE),
        ("I", f"Attempting to upgrade input file specified using deprecated V1LayerParameter: {source}"),
        ("I", "Successfully upgraded file specified using deprecated V1LayerParameter"),
        ("I", f"Wrote upgraded NetParameter text proto to {target}"),
    ]
    assert read_net_text(target) == read_net_text(UPGRADE_FIXTURES / "v2_simple.prototxt")


def test_text_tool_on_a_current_net_says_so_and_copies_it(tmp_path):
    source, target = UPGRADE_FIXTURES / "v2_imagenet.prototxt", tmp_path / "same.prototxt"
    code, log = run_console_script("upgrade_net_proto_text", source, target)
    assert code == 0
    assert log == [("E", f"File already in latest proto format: {source}"),
                   ("I", f"Wrote upgraded NetParameter text proto to {target}")]
    assert read_net_text(target) == read_net_text(source)


def test_text_tool_reports_incompatible_fields_with_exit_1(tmp_path):
    source, target = tmp_path / "odd.prototxt", tmp_path / "out.prototxt"
    source.write_text("layers { layer { name: 'r' type: 'relu' group: 2 } top: 'y' }\n")
    code, log = run_console_script("upgrade_net_proto_text", source, target)
    assert code == 1
    assert ("E", "Unknown parameter group for layer type relu") in log
    assert ("E", "Encountered error(s) while upgrading prototxt; see details above.") in log
    assert read_net_text(target).layer[0].type == "ReLU"
