"""Softmax along one axis, computed after subtracting the maximum so large logits do not overflow."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.axes import canonical_axis, split_at
from caffe_layers_std.rounding import expf


def softmax(xp: ArrayModule, x: Array) -> Array:
    """The softmax of an (outer, channels, inner) array along axis 1, stable for large inputs."""
    e = expf(xp, x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_backward(y: Array, dy: Array) -> Array:
    """The bottom diff of a softmax with output y and top diff dy, both (outer, channels, inner)."""
    return (dy - (dy * y).sum(axis=1, keepdims=True)) * y


class SoftmaxLayer(Layer):
    """exp(x - max) / sum exp(x - max) along softmax_param.axis."""

    type = "Softmax"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top takes the bottom's shape; records the (outer, channels, inner) split."""
        axis = canonical_axis(self, bottom[0], self.layer_param.softmax_param.axis, "softmax_param.axis")
        top[0].reshape_like(bottom[0])
        self.split = split_at(bottom[0], axis)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = softmax(x) along the axis."""
        x = bottom[0].data_on(side).reshape(self.split)
        top[0].mutable_data_on(side).reshape(self.split)[...] = softmax(side.xp, x)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (dy - sum(dy * y)) * y along the axis."""
        if not propagate_down[0]:
            return
        y = top[0].data_on(side).reshape(self.split)
        dy = top[0].diff_on(side).reshape(self.split)
        bottom[0].mutable_diff_on(side).reshape(self.split)[...] = softmax_backward(y, dy)
