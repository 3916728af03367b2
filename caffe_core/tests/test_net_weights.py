"""Trained weights in and out of a net: .caffemodel, Caffe's HDF5 layout, and sharing with another net."""

import pytest

from caffe_core import proto_io
from caffe_core.errors import ModelFileError, NetBuildError
from caffe_core.proto import caffe_pb2

from .conftest import INPUT, ScaleByParam, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


def test_save_and_copy_trained_layers(tmp_path):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    net = build(text)
    net.layer_by_name("s").blobs[0].data[...] = 7
    path = tmp_path / "w.caffemodel"
    net.save(path)
    saved = proto_io.read_binary_file(path, caffe_pb2.NetParameter())
    assert [layer.name for layer in saved.layer] == ["data", "s"]
    assert saved.layer[1].phase == caffe_pb2.TEST
    other = build(text + 'layer { name: "extra" type: "TestScale" bottom: "y" top: "z" }')
    other.copy_trained_layers_from(path)
    assert other.layer_by_name("s").blobs[0].data[0] == 7
    assert other.layer_by_name("extra").blobs[0].data[0] == 2


def test_each_layer_sees_the_stored_layer_its_blobs_came_from(tmp_path, monkeypatch):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    stored = build(text).to_proto()
    stored.layer[1].loss_weight.append(0.5)
    path = tmp_path / "w.caffemodel"
    proto_io.write_binary_file(path, stored)
    seen = []
    monkeypatch.setattr(ScaleByParam, "adopt_stored_layer", lambda self, source: seen.append(
        (self.name, list(source.loss_weight))))
    build(text).copy_trained_layers_from(path)
    assert seen == [("s", [0.5])]


def test_copy_with_shape_mismatch_names_layer_and_shapes(tmp_path):
    param = caffe_pb2.NetParameter()
    stored = param.layer.add(name="s", type="TestScale").blobs.add()
    stored.shape.dim.extend([2])
    stored.data.extend([1, 2])
    path = tmp_path / "bad.caffemodel"
    proto_io.write_binary_file(path, param)
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    with pytest.raises(ModelFileError, match=r"Cannot copy param 0 weights from layer 's'; shape mismatch\. "
                                             r"Source param shape is \(2,\); target param shape is \(1,\)"):
        net.copy_trained_layers_from(path)


def test_a_layers_advice_replaces_caffes_on_a_shape_mismatch(tmp_path, monkeypatch):
    param = caffe_pb2.NetParameter()
    stored = param.layer.add(name="s", type="TestScale").blobs.add()
    stored.shape.dim.extend([2])
    stored.data.extend([1, 2])
    path = tmp_path / "bad.caffemodel"
    proto_io.write_binary_file(path, param)
    asked = []
    monkeypatch.setattr(ScaleByParam, "stored_blob_advice", lambda self, index, shape: asked.append(
        (index, tuple(shape))) or "Store one value.")
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    with pytest.raises(ModelFileError, match=r"target param shape is \(1,\)\. Store one value\.$"):
        net.copy_trained_layers_from(path)
    assert asked == [(0, (2,))]


def test_hdf5_weights_round_trip(tmp_path):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    net = build(text)
    net.layer_by_name("s").blobs[0].data[...] = 5
    path = tmp_path / "w.caffemodel.h5"
    net.to_hdf5(path)
    other = build(text)
    other.copy_trained_layers_from(path)
    assert other.layer_by_name("s").blobs[0].data[0] == 5


def test_a_net_shares_the_weights_of_another_nets_layers_of_the_same_name():
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    train = build(text, caffe_pb2.TRAIN)
    test = build(text + 'layer { name: "t" type: "TestScale" bottom: "y" top: "z" }')
    test.share_trained_layers_with(train)
    train.layer_by_name("s").blobs[0].data[...] = 9
    assert test.layer_by_name("s").blobs[0].data[0] == 9 and test.layer_by_name("t").blobs[0].data[0] == 2
    lossy = build(INPUT + 'layer { name: "s" type: "TestSumLoss" bottom: "x" top: "y" }')
    with pytest.raises(NetBuildError, match="Incompatible number of blobs for layer s"):
        lossy.share_trained_layers_with(train)


def test_a_missing_weights_file_is_named(tmp_path):
    net = build(INPUT)
    with pytest.raises(ModelFileError, match="nothing.caffemodel: file not found"):
        net.copy_trained_layers_from(tmp_path / "nothing.caffemodel")
