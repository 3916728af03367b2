"""Embed: looks up a row of a (input_dim, num_output) table for each integer index in the bottom."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.common.batch_reindex import scatter_add
from caffe_layers_std.common.inner_product import create_weight_and_bias


class EmbedLayer(Layer):
    """y[..., :] = W[x[...]] (+ b); indices get no gradient."""

    type = "Embed"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the parameters and creates (or checks) the table and bias blobs."""
        param = self.layer_param.embed_param
        self.num_output = param.num_output
        self.input_dim = param.input_dim
        if self.num_output <= 0:
            raise self.error("embed_param.num_output must be set to a positive value")
        if self.input_dim <= 0:
            raise self.error("embed_param.input_dim must be set to a positive value")
        self.bias_term = param.bias_term
        create_weight_and_bias(self, param, (self.input_dim, self.num_output), self.num_output)

    def allow_force_backward(self, bottom_index: int) -> bool:
        """Indices are not differentiable."""
        return False

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's shape, then num_output."""
        top[0].reshape(bottom[0].shape + (self.num_output,))

    def _indices(self, side: Side, bottom: Blob) -> Array:
        xp = side.xp
        values = bottom.data_on(side).reshape(-1)
        indices = values.astype(xp.int64)
        bad = (indices < 0) | (indices >= self.input_dim) | (indices != values)
        if bool(bad.any()):
            first = float(values[int(xp.argmax(bad))])
            raise self.error(f"input {first} is not an integer index in [0, input_dim={self.input_dim})")
        return indices

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = W[x] (+ b)."""
        rows = self.blobs[0].data_on(side)[self._indices(side, bottom[0])]
        if self.bias_term:
            rows = rows + self.blobs[1].data_on(side)
        top[0].mutable_data_on(side)[...] = rows.reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dW[x] += dy, db += sum dy; refuses to back-propagate to the indices."""
        if propagate_down[0]:
            raise self.error("cannot back-propagate to its index input (set propagate_down: false)")
        dy = top[0].diff_on(side).reshape(-1, self.num_output)
        if self.param_propagate_down(0):
            scatter_add(side.xp, self.blobs[0].mutable_diff_on(side), self._indices(side, bottom[0]), dy)
        if self.bias_term and self.param_propagate_down(1):
            self.blobs[1].mutable_diff_on(side)[...] += dy.sum(axis=0)
