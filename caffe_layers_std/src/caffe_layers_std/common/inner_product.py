"""InnerProduct: a fully connected layer, y = x W^T + b over the axes from `axis` on."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blas import gemm_accumulate
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_std.axes import canonical_axis


def create_weight_and_bias(layer: Layer, param: caffe_pb2.InnerProductParameter | caffe_pb2.EmbedParameter,
                           weight_shape: tuple[int, ...], num_output: int) -> None:
    """Creates and fills the weight (and bias, with bias_term) unless stored blobs came; checks the count."""
    if not layer.blobs:
        weight = Blob(weight_shape)
        get_filler(param.weight_filler).fill(weight)
        layer.blobs.append(weight)
        if param.bias_term:
            bias = Blob((num_output,))
            get_filler(param.bias_filler).fill(bias)
            layer.blobs.append(bias)
    expected = 2 if param.bias_term else 1
    if len(layer.blobs) != expected:
        raise layer.error(f"expects {expected} learnable blob(s) (bias_term: {param.bias_term}), "
                          f"got {len(layer.blobs)}")


class InnerProductLayer(Layer):
    """Flattens the bottom from `axis` into K inputs; W is (N, K), or (K, N) with transpose."""

    type = "InnerProduct"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the parameters and creates (or checks) the weight and bias blobs."""
        param = self.layer_param.inner_product_param
        if not param.HasField("num_output"):
            raise self.error("inner_product_param.num_output is required")
        self.num_output = param.num_output
        self.bias_term = param.bias_term
        self.transpose = param.transpose
        self.axis = canonical_axis(self, bottom[0], param.axis, "inner_product_param.axis")
        self.k = bottom[0].count_between(self.axis)
        weight_shape = (self.k, self.num_output) if self.transpose else (self.num_output, self.k)
        create_weight_and_bias(self, param, weight_shape, self.num_output)
        if self.blobs[0].count != self.num_output * self.k:
            raise self.error(f"weight blob has shape {self.blobs[0].shape}; expected {weight_shape}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's axes before `axis`, then num_output."""
        axis = canonical_axis(self, bottom[0], self.layer_param.inner_product_param.axis,
                              "inner_product_param.axis")
        k = bottom[0].count_between(axis)
        if k != self.k:
            raise self.error(f"input size incompatible with inner product parameters: the bottom "
                             f"{bottom[0].shape} gives {k} inputs from axis {axis}, the weights expect "
                             f"{self.k}")
        self.m = bottom[0].count_between(0, axis)
        top[0].reshape(bottom[0].shape[:axis] + (self.num_output,))

    def _weight_nk(self, array: Array) -> Array:
        """The weight (or its diff) as an (N, K) matrix."""
        return array.reshape(self.k, self.num_output).T if self.transpose else \
            array.reshape(self.num_output, self.k)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x W^T (+ b)."""
        x = bottom[0].data_on(side).reshape(self.m, self.k)
        y = top[0].mutable_data_on(side).reshape(self.m, self.num_output)
        # W x^T streams the weight faster than x W^T when the batch is small (CaffeNet's fc6: 14 vs 19 ms).
        y[...] = (self._weight_nk(self.blobs[0].data_on(side)) @ x.T).T
        if self.bias_term:
            y += self.blobs[1].data_on(side)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dW += dy^T x, db += sum dy, dx = dy W."""
        dy = top[0].diff_on(side).reshape(self.m, self.num_output)
        if self.param_propagate_down(0):
            x = bottom[0].data_on(side).reshape(self.m, self.k)
            weight_diff = self.blobs[0].mutable_diff_on(side)
            if self.transpose:
                gemm_accumulate(x.T, dy, weight_diff.reshape(self.k, self.num_output))
            else:
                gemm_accumulate(dy.T, x, weight_diff.reshape(self.num_output, self.k))
        if self.bias_term and self.param_propagate_down(1):
            self.blobs[1].mutable_diff_on(side)[...] += dy.sum(axis=0)
        if propagate_down[0]:
            dx = bottom[0].mutable_diff_on(side).reshape(self.m, self.k)
            side.xp.matmul(dy, self._weight_nk(self.blobs[0].data_on(side)), out=dx)
