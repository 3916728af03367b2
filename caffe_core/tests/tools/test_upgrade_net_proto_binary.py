"""upgrade_net_proto_binary: a V0 .caffemodel upgraded with its blobs, corrupt input (exit 2), empty input."""

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2

from .conftest import UPGRADE_FIXTURES, read_net_text, run_console_script


def test_binary_tool_upgrades_a_v0_caffemodel(tmp_path):
    source, target = tmp_path / "old.caffemodel", tmp_path / "new.caffemodel"
    old = read_net_text(UPGRADE_FIXTURES / "v0_imagenet.prototxt")
    old.layers[1].layer.blobs.add().data.extend([0.5, -1.0])  # conv1 weights travel with the layer
    proto_io.write_binary_file(source, old)
    code, log = run_console_script("upgrade_net_proto_binary", source, target)
    assert code == 0
    assert log[-1] == ("I", f"Wrote upgraded NetParameter binary proto to {target}")
    attempt = f"Attempting to upgrade input file specified using deprecated V0LayerParameter: {source}"
    assert ("I", attempt) in log
    upgraded = proto_io.read_binary_file(target, caffe_pb2.NetParameter())
    assert list(upgraded.layer[1].blobs[0].data) == [0.5, -1.0]
    del upgraded.layer[1].blobs[:]
    assert upgraded == read_net_text(UPGRADE_FIXTURES / "v2_imagenet.prototxt")


def test_binary_tool_rejects_a_corrupt_file_with_exit_2(tmp_path):
    source = tmp_path / "cut.caffemodel"
    data = read_net_text(UPGRADE_FIXTURES / "v2_simple.prototxt").SerializeToString()
    source.write_bytes(data[: len(data) // 2])
    code, log = run_console_script("upgrade_net_proto_binary", source, tmp_path / "out.caffemodel")
    assert code == 2
    assert log[-1] == ("E", f"Failed to parse input binary file as NetParameter: {source}")


def test_binary_tool_takes_an_empty_file_as_an_empty_net(tmp_path):
    source, target = tmp_path / "empty.caffemodel", tmp_path / "out.caffemodel"
    source.write_bytes(b"")
    code, log = run_console_script("upgrade_net_proto_binary", source, target)
    assert code == 0
    assert log[0] == ("E", f"File already in latest proto format: {source}")
    assert target.read_bytes() == b""
