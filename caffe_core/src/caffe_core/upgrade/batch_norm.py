"""BatchNorm layers with three ParamSpecs get lr_mult and decay_mult 0 (its blobs are statistics)."""

from __future__ import annotations

from caffe_core.proto import caffe_pb2


def needs(param: caffe_pb2.NetParameter) -> bool:
    """Whether a BatchNorm layer still declares its three param specs."""
    return any(layer.type == "BatchNorm" and len(layer.param) == 3 for layer in param.layer)


def upgrade(param: caffe_pb2.NetParameter) -> None:
    """Zeroes lr_mult and decay_mult of those param specs."""
    for layer in param.layer:
        if layer.type == "BatchNorm" and len(layer.param) == 3:
            for spec in layer.param:
                spec.lr_mult = 0
                spec.decay_mult = 0
