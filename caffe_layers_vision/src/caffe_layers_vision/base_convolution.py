"""The machinery Convolution and Deconvolution share: parameters, weight blobs, shapes and the batched GEMMs.

Both layers are written in convolution's orientation: the "conv input" is the bottom of Convolution and
the top of Deconvolution. A whole batch is one matrix product per group (batched over groups): the
weights (G, M/G, K/G) times the columns (G, K/G, prod(out) * num), with K = C_in * prod(kernel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_layers_vision.im2col_ops import batch_first, batch_last, col2im, im2col
from caffe_layers_vision.spatial_params import read_layer_geometry, refuse_empty_output, spatial_shape
from caffe_layers_vision.workspace import Workspace, shared_scratch


class BaseConvolutionLayer(Layer):
    """Convolution's parameters, learnable blobs and GEMM helpers; subclasses choose the orientation."""

    min_bottom_blobs = 1
    min_top_blobs = 1
    equal_num_bottom_top_blobs = True
    reverse_dimensions = False

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads convolution_param with Caffe's checks and creates (or checks) the weight and bias blobs."""
        conv = self.layer_param.convolution_param
        self.channel_axis, self.params = read_layer_geometry(self, bottom[0])
        self.channels = bottom[0].shape_at(self.channel_axis)
        self.num_output = int(conv.num_output)
        self.group = int(conv.group)
        if self.num_output <= 0:
            raise self.error("convolution_param.num_output must be greater than 0")
        if self.group <= 0:
            raise self.error("convolution_param.group must be greater than 0")
        if self.channels % self.group:
            raise self.error(f"the input's {self.channels} channels are not divisible by group {self.group}")
        if self.num_output % self.group:
            raise self.error(f"num_output {self.num_output} is not a multiple of group {self.group}")
        if self.reverse_dimensions:
            self.conv_out_channels, self.conv_in_channels = self.channels, self.num_output
        else:
            self.conv_out_channels, self.conv_in_channels = self.num_output, self.channels
        self.bias_term = bool(conv.bias_term)
        weight_shape = (self.conv_out_channels, self.conv_in_channels // self.group, *self.params.kernel)
        if self.blobs:
            self._check_stored_blobs(weight_shape)
        else:
            self.blobs = [Blob(weight_shape)]
            get_filler(conv.weight_filler).fill(self.blobs[0])
            if self.bias_term:
                self.blobs.append(Blob((self.num_output,)))
                get_filler(conv.bias_filler).fill(self.blobs[1])
        # Buffers kept between calls (forward columns, padded inputs); transient ones are shared.
        self.workspace = Workspace()

    def _check_stored_blobs(self, weight_shape: tuple[int, ...]) -> None:
        expected = 1 + self.bias_term
        if len(self.blobs) != expected:
            raise self.error(f"incorrect number of weight blobs: expected {expected} "
                             f"(bias_term {str(self.bias_term).lower()}), got {len(self.blobs)}")
        if self.blobs[0].shape != weight_shape:
            raise self.error(f"incorrect weight shape: expected shape {list(weight_shape)}; "
                             f"instead, shape was {list(self.blobs[0].shape)}")
        if self.bias_term and self.blobs[1].shape != (self.num_output,):
            raise self.error(f"incorrect bias shape: expected shape [{self.num_output}]; "
                             f"instead, shape was {list(self.blobs[1].shape)}")

    def compute_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The top's spatial shape from the bottom's."""
        raise NotImplementedError

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the tops: the leading axes, num_output channels, then the computed spatial shape."""
        self.bottom_spatial = spatial_shape(self, bottom[0], self.channel_axis, self.params)
        if bottom[0].shape_at(self.channel_axis) != self.channels:
            raise self.error(f"input size incompatible with convolution kernel: expected {self.channels} "
                             f"channels, got {bottom[0].shape_at(self.channel_axis)}")
        for index, blob in enumerate(bottom[1:], start=1):
            if blob.shape != bottom[0].shape:
                raise self.error(f"all inputs must have the same shape: bottom {index} is "
                                 f"{list(blob.shape)}, bottom 0 is {list(bottom[0].shape)}")
        self.num = bottom[0].count_between(0, self.channel_axis)
        self.top_spatial = self.compute_output_shape(self.bottom_spatial)
        refuse_empty_output(self, self.params, self.bottom_spatial, self.top_spatial)
        top_shape = (*bottom[0].shape[: self.channel_axis], self.num_output, *self.top_spatial)
        for blob in top:
            blob.reshape(top_shape)
        if self.reverse_dimensions:
            self.conv_in_spatial, self.conv_out_spatial = self.top_spatial, self.bottom_spatial
        else:
            self.conv_in_spatial, self.conv_out_spatial = self.bottom_spatial, self.top_spatial

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Per top: the bias gradient here, the weight and bottom gradients by the subclass."""
        for index, (source, target) in enumerate(zip(bottom, top, strict=True)):
            top_diff = target.diff_on(side)
            if self.bias_term and self.param_propagate_down(1):
                self.bias_gradient(side, top_diff)
            if self.param_propagate_down(0) or propagate_down[index]:
                self.weight_and_bottom_gradients(side, index, source, top_diff, propagate_down[index])

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Any,
                                    to_bottom: bool) -> None:
        """Accumulates the weight diff (if wanted) and writes the diff of bottom `index` if `to_bottom`."""
        raise NotImplementedError

    # ----- the GEMMs, in convolution's orientation -----
    def conv_input(self, array: Any) -> Any:
        """A conv-input blob's array as (num, conv_in_channels, *conv_in_spatial)."""
        return array.reshape(self.num, self.conv_in_channels, *self.conv_in_spatial)

    def conv_output(self, array: Any) -> Any:
        """A conv-output blob's array as (num, conv_out_channels, *conv_out_spatial)."""
        return array.reshape(self.num, self.conv_out_channels, *self.conv_out_spatial)

    def columns(self, xp: Any, conv_input: Any, name: str, work: Workspace) -> Any:
        """im2col of a conv input, as (G, K/G, prod(out) * num) in the named buffer of `work`."""
        cols = im2col(xp, conv_input, self.params, self.conv_out_spatial, work, name)
        return cols.reshape(self.group, -1, cols.shape[1])

    def batch_last(self, xp: Any, conv_output: Any, name: str) -> Any:
        """A conv output (num, M, *out) as (G, M/G, prod(out) * num), copied only when num > 1."""
        points = math.prod(self.conv_out_spatial)
        if self.num == 1:
            return conv_output.reshape(self.group, -1, points)
        out = shared_scratch().array(xp, name, (self.conv_out_channels, points, self.num))
        out[...] = batch_last(conv_output.reshape(self.num, self.conv_out_channels, points))
        return out.reshape(self.group, -1, points * self.num)

    def weights(self, side: Side) -> Any:
        """The weights as (G, M/G, K/G)."""
        return self.blobs[0].data_on(side).reshape(self.group, self.conv_out_channels // self.group, -1)

    def forward_gemm(self, side: Side, cols: Any, out: Any, bias: Any | None) -> None:
        """out (num, M, *out) = weights x columns (+ bias per output channel)."""
        xp = side.xp
        points = math.prod(self.conv_out_spatial)
        weights = self.weights(side)
        if self.num == 1:
            product = out.reshape(self.group, -1, points)
            xp.matmul(weights, cols, out=product)
            if bias is not None:
                product.reshape(self.conv_out_channels, points)[...] += bias[:, None]
            return
        product = shared_scratch().array(xp, "product", (self.group, weights.shape[1], cols.shape[2]))
        xp.matmul(weights, cols, out=product)
        by_image = batch_first(product.reshape(self.conv_out_channels, points, self.num))
        target = out.reshape(self.num, self.conv_out_channels, points)
        if bias is None:
            target[...] = by_image
        else:
            xp.add(by_image, bias[None, :, None], out=target)

    def backward_gemm(self, side: Side, out_last: Any) -> Any:
        """Columns (G, K/G, prod(out) * num) = weights^T x a batch-last conv-output diff."""
        xp = side.xp
        weights = self.weights(side)
        cols = shared_scratch().array(xp, "col_diff", (self.group, weights.shape[2], out_last.shape[2]))
        xp.matmul(weights.transpose(0, 2, 1), out_last, out=cols)
        return cols

    def weight_gemm(self, side: Side, cols: Any, out_last: Any) -> None:
        """Accumulates the weight diff: batch-last conv-output diff x columns^T."""
        diff = self.blobs[0].mutable_diff_on(side)
        diff.reshape(self.group, self.conv_out_channels // self.group, -1)[...] += side.xp.matmul(
            out_last, cols.transpose(0, 2, 1))

    def bias_gradient(self, side: Side, top_diff: Any) -> None:
        """Accumulates the bias diff: the top diff summed over everything but the channel axis."""
        points = math.prod(self.top_spatial)
        summed = top_diff.reshape(self.num, self.num_output, points).sum(axis=(0, 2))
        self.blobs[1].mutable_diff_on(side)[...] += summed

    def col2im(self, side: Side, cols: Any, out: Any) -> None:
        """Writes the col2im of columns (G, K/G, prod(out) * num) into a conv-input array."""
        flat = cols.reshape(-1, cols.shape[2])
        col2im(side.xp, flat, out, self.params, self.conv_out_spatial, shared_scratch(), "col2im")
