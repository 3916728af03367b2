"""BatchNorm layers declaring the old three param specs get lr_mult and decay_mult 0; others are untouched."""

from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import batch_norm


def _layer(net, layer_type, specs):
    layer = net.layer.add(name=f"{layer_type}{specs}", type=layer_type)
    for _ in range(specs):
        layer.param.add(lr_mult=1, decay_mult=1, name="shared")
    return layer


def test_three_specs_are_zeroed_and_their_other_fields_kept():
    net = caffe_pb2.NetParameter()
    old = _layer(net, "BatchNorm", 3)
    assert batch_norm.needs(net)
    batch_norm.upgrade(net)
    assert [(s.lr_mult, s.decay_mult, s.name) for s in old.param] == [(0, 0, "shared")] * 3
    upgraded = net.SerializeToString()
    assert batch_norm.needs(net)  # Caffe's check counts specs only, so the step re-runs, changing nothing
    batch_norm.upgrade(net)
    assert net.SerializeToString() == upgraded


def test_other_layers_and_other_spec_counts_are_left_alone():
    net = caffe_pb2.NetParameter()
    layers = [_layer(net, "BatchNorm", 2), _layer(net, "Scale", 3)]
    before = net.SerializeToString()
    assert not batch_norm.needs(net)
    batch_norm.upgrade(net)
    assert net.SerializeToString() == before and all(len(layer.param) for layer in layers)
