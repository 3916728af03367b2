"""The legacy net-level `input`/`input_shape`/`input_dim` fields become an Input layer."""

from __future__ import annotations

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2


def needs(param: caffe_pb2.NetParameter) -> bool:
    """Whether the net still uses the legacy input fields."""
    return len(param.input) > 0


def upgrade(param: caffe_pb2.NetParameter) -> None:
    """Moves the legacy input fields into a leading Input layer named "input"."""
    has_shape = len(param.input_shape) > 0
    has_dim = len(param.input_dim) > 0
    if has_shape or has_dim:
        layer = caffe_pb2.LayerParameter(name="input", type="Input")
        if has_shape and len(param.input_shape) != len(param.input):
            raise NetBuildError(f"net '{param.name}': {len(param.input)} inputs but "
                                f"{len(param.input_shape)} input_shape entries")
        if has_dim and len(param.input_dim) != 4 * len(param.input):
            raise NetBuildError(f"net '{param.name}': input_dim must hold 4 values per input "
                                f"({len(param.input)} inputs, {len(param.input_dim)} values)")
        for i, name in enumerate(param.input):
            layer.top.append(name)
            shape = layer.input_param.shape.add()
            if has_shape:
                shape.CopyFrom(param.input_shape[i])
            else:
                shape.dim.extend(param.input_dim[4 * i: 4 * i + 4])
        layers = [layer] + [_copy(existing) for existing in param.layer]
        del param.layer[:]
        param.layer.extend(layers)
    param.ClearField("input")
    param.ClearField("input_shape")
    param.ClearField("input_dim")


def _copy(layer: caffe_pb2.LayerParameter) -> caffe_pb2.LayerParameter:
    copy = caffe_pb2.LayerParameter()
    copy.CopyFrom(layer)
    return copy
