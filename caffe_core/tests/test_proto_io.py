"""Reading and writing Caffe files: precise parse errors, corrupt binaries, atomic writes."""

import os

import pytest

from caffe_core import proto_io
from caffe_core.errors import ModelFileError, PrototxtError
from caffe_core.proto import caffe_pb2


def test_parse_error_names_file_line_and_column(tmp_path):
    path = tmp_path / "net.prototxt"
    path.write_text('name: "n"\nlayer {\n  name: "a"\n  bottm: "x"\n}\n')
    with pytest.raises(PrototxtError, match=r"net\.prototxt:4:3: .*no field named \"bottm\""):
        proto_io.read_text_file(path, caffe_pb2.NetParameter())


def test_missing_text_file():
    with pytest.raises(PrototxtError, match="nowhere.prototxt: file not found"):
        proto_io.read_text_file("nowhere.prototxt", caffe_pb2.NetParameter())


def test_truncated_caffemodel_is_reported(tmp_path):
    param = caffe_pb2.NetParameter(name="n")
    layer = param.layer.add(name="ip", type="InnerProduct")
    layer.blobs.add().data.extend([1.0] * 100)
    data = param.SerializeToString()
    path = tmp_path / "cut.caffemodel"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match=r"cut\.caffemodel: not a valid binary NetParameter"):
        proto_io.read_binary_file(path, caffe_pb2.NetParameter())


def test_empty_caffemodel_is_reported(tmp_path):
    path = tmp_path / "empty.caffemodel"
    path.write_bytes(b"")
    with pytest.raises(ModelFileError, match="file is empty"):
        proto_io.read_binary_file(path, caffe_pb2.NetParameter())


def test_binary_round_trip(tmp_path):
    param = caffe_pb2.NetParameter(name="round")
    param.layer.add(name="a", type="ReLU")
    path = tmp_path / "m.caffemodel"
    proto_io.write_binary_file(path, param)
    assert proto_io.read_binary_file(path, caffe_pb2.NetParameter()) == param


def test_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "keep.caffemodel"
    path.write_bytes(b"old")

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        proto_io.write_bytes_atomically(path, b"new contents")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["keep.caffemodel"]


def test_corrupt_bytes_without_a_source_are_named_as_bytes():
    with pytest.raises(ModelFileError, match=r"^<bytes>: not a valid binary NetParameter"):
        proto_io.parse_binary(b"\x0a\x05ab", caffe_pb2.NetParameter())
