"""The legacy net-level input fields become a leading Input layer, or are dropped when they carry no shape."""

import pytest

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import input_fields


def _net(**fields):
    net = caffe_pb2.NetParameter(name="legacy", **fields)
    net.layer.add(name="ip", type="InnerProduct", bottom=["data"], top=["ip"])
    return net


def test_input_dim_becomes_four_dims_per_input_in_a_first_layer():
    net = _net(input=["data", "label"], input_dim=[2, 3, 4, 5, 2, 1, 1, 1])
    assert input_fields.needs(net)
    input_fields.upgrade(net)
    first = net.layer[0]
    assert (first.name, first.type, list(first.top)) == ("input", "Input", ["data", "label"])
    assert [list(shape.dim) for shape in first.input_param.shape] == [[2, 3, 4, 5], [2, 1, 1, 1]]
    assert [layer.name for layer in net.layer] == ["input", "ip"]
    assert not (net.input or net.input_dim or net.input_shape) and not input_fields.needs(net)


def test_input_shape_is_copied_as_is():
    net = _net(input=["data"], input_shape=[caffe_pb2.BlobShape(dim=[7, 1, 3])])
    input_fields.upgrade(net)
    assert list(net.layer[0].input_param.shape[0].dim) == [7, 1, 3]


def test_inputs_without_shape_are_just_dropped():
    net = _net(input=["data"])
    input_fields.upgrade(net)
    assert [layer.name for layer in net.layer] == ["ip"] and not net.input


@pytest.mark.parametrize(("fields", "message"), [
    ({"input": ["a", "b"], "input_shape": [caffe_pb2.BlobShape(dim=[1])]},
     "net 'legacy': 2 inputs but 1 input_shape entries"),
    ({"input": ["a"], "input_dim": [1, 2, 3]}, "net 'legacy': input_dim must hold 4 values per input"),
])
def test_mismatched_shapes_name_the_net_and_leave_it_unchanged(fields, message):
    net = _net(**fields)
    before = net.SerializeToString()
    with pytest.raises(NetBuildError, match=message):
        input_fields.upgrade(net)
    assert net.SerializeToString() == before
