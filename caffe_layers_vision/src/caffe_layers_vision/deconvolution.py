"""Caffe's Deconvolution layer: convolution's backward-data pass used as a forward pass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_layers_vision.base_convolution import BaseConvolutionLayer
from caffe_layers_vision.workspace import shared_scratch


class DeconvolutionLayer(BaseConvolutionLayer):
    """Transposed convolution; weights are (C_in, num_output/group, *kernel) as in Caffe."""

    type = "Deconvolution"
    param_block = "convolution_param"
    reverse_dimensions = True

    def compute_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """stride * (in - 1) + dilated kernel - 2 pad."""
        return tuple(s * (i - 1) + e - 2 * p for i, s, e, p in
                     zip(input_shape, self.params.stride, self.params.extent, self.params.pad, strict=True))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """col2im of weights^T x bottom, plus the bias."""
        xp = side.xp
        for source, target in zip(bottom, top, strict=True):
            bottom_last = self.batch_last(xp, self.conv_output(source.data_on(side)), "bottom_last")
            cols = self.backward_gemm(side, bottom_last)
            out = self.conv_input(target.mutable_data_on(side))
            self.col2im(side, cols, out)
            if self.bias_term:
                bias = self.blobs[1].data_on(side)
                out.reshape(self.num, self.num_output, -1)[...] += bias[None, :, None]

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Any,
                                    to_bottom: bool) -> None:
        """Both gradients from the im2col of the top diff."""
        xp = side.xp
        cols = self.columns(xp, self.conv_input(top_diff), "top_diff_cols", shared_scratch())
        if self.param_propagate_down(0):
            bottom_last = self.batch_last(xp, self.conv_output(source.data_on(side)), "bottom_last")
            self.weight_gemm(side, cols, bottom_last)
        if to_bottom:
            self.forward_gemm(side, cols, self.conv_output(source.mutable_diff_on(side)), None)
