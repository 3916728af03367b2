"""Bias: adds a blob (learned, or the second bottom) broadcast over the bottom from `axis` on."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_layers_std.axes import canonical_axis


def learned_shape(layer: Layer, bottom: Blob, axis: int, num_axes: int, field: str) -> tuple[int, ...]:
    """A learned Scale/Bias blob's shape: bottom axes [axis, axis + num_axes), num_axes -1 meaning all."""
    start = canonical_axis(layer, bottom, axis, f"{field}.axis")
    if num_axes < -1:
        raise layer.error(f"{field}.num_axes must be non-negative, or -1 to extend to the end of bottom[0]; "
                          f"got {num_axes}")
    if num_axes >= 0 and bottom.num_axes < start + num_axes:
        raise layer.error(f"the blob's shape extends past bottom[0]'s shape {bottom.shape} when applied "
                          f"from axis {start} over {num_axes} axes")
    end = bottom.num_axes if num_axes == -1 else start + num_axes
    return bottom.shape[start:end]


def broadcast_dims(layer: Layer, bottom: Blob, operand: Blob, axis: int, field: str) -> tuple[int, int, int]:
    """(outer, operand count, inner) for broadcasting operand over bottom from axis; checks the shapes."""
    start = 0 if operand.num_axes == 0 else canonical_axis(layer, bottom, axis, f"{field}.axis")
    if bottom.shape[start:start + operand.num_axes] != operand.shape:
        raise layer.error(f"operand of shape {operand.shape} does not match bottom[0] shape {bottom.shape} "
                          f"from axis {start}")
    return (bottom.count_between(0, start), operand.count,
            bottom.count_between(start + operand.num_axes))


class BiasLayer(Layer):
    """y = x + b, b broadcast along the axes it does not cover; b is learned with one bottom."""

    type = "Bias"
    min_bottom_blobs = 1
    max_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """With one bottom, creates the learned bias (filled by bias_param.filler, constant 0 by default)."""
        param = self.layer_param.bias_param
        if len(bottom) == 1 and not self.blobs:
            bias = Blob(learned_shape(self, bottom[0], param.axis, param.num_axes, "bias_param"))
            get_filler(param.filler).fill(bias)
            self.blobs.append(bias)

    def _bias(self, bottom: Sequence[Blob]) -> Blob:
        return bottom[1] if len(bottom) > 1 else self.blobs[0]

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's; works out the broadcast."""
        self.dims = broadcast_dims(self, bottom[0], self._bias(bottom), self.layer_param.bias_param.axis,
                                   "bias_param")
        if top[0] is not bottom[0]:
            top[0].reshape_like(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x + b."""
        x = bottom[0].data_on(side).reshape(self.dims)
        b = self._bias(bottom).data_on(side).reshape(1, -1, 1)
        top[0].mutable_data_on(side)[...] = (x + b).reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy; db (+= for the learned bias) = dy summed over the broadcast axes."""
        learned = len(bottom) == 1
        if (learned and self.param_propagate_down(0)) or (not learned and propagate_down[1]):
            summed = top[0].diff_on(side).reshape(self.dims).sum(axis=(0, 2), dtype=side.xp.float32)
            bias_diff = self._bias(bottom).mutable_diff_on(side)
            if learned:
                bias_diff += summed.reshape(bias_diff.shape)
            else:
                bias_diff[...] = summed.reshape(bias_diff.shape)
        if propagate_down[0] and top[0] is not bottom[0]:
            bottom[0].mutable_diff_on(side)[...] = top[0].diff_on(side)
