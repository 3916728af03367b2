"""Reading net definitions and trained nets from files, upgraded from older formats."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import ModelFileError
from caffe_core.net_files import read_net_binary, read_net_param
from caffe_core.proto import caffe_pb2


def test_a_text_net_with_the_old_input_fields_gets_an_input_layer(tmp_path):
    path = tmp_path / "old.prototxt"
    path.write_text('name: "old" input: "data" input_shape { dim: 1 dim: 3 }')
    param = read_net_param(path)
    assert not param.input
    assert [(layer.type, list(layer.top)) for layer in param.layer] == [("Input", ["data"])]


def test_a_binary_net_is_read_back_and_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "net.caffemodel"
    proto_io.write_binary_file(path, caffe_pb2.NetParameter(layer=[caffe_pb2.LayerParameter(name="l")]))
    assert [layer.name for layer in read_net_binary(path).layer] == ["l"]
    path.write_bytes(b"")
    with pytest.raises(ModelFileError, match="file is empty"):
        read_net_binary(path)
