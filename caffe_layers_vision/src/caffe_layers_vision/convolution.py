"""Caffe's Convolution layer: N spatial axes, groups, dilation, one batched GEMM per chunk of images."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_layers_vision.base_convolution import BaseConvolutionLayer


class ConvolutionLayer(BaseConvolutionLayer):
    """Convolves each bottom with learned filters (weights (num_output, C/group, *kernel)) plus a bias."""

    type = "Convolution"

    def compute_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """(in + 2 pad - dilated kernel) / stride + 1, rounded down."""
        return self.params.conv_output_shape(input_shape)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Convolution's setup, and the token that marks columns this layer leaves in the shared scratch."""
        super().layer_setup(bottom, top)
        self.columns_token = object()

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """im2col of each chunk of images times the weights, plus the bias."""
        bias = self.blobs[1].data_on(side) if self.bias_term else None
        for index, (source, target) in enumerate(zip(bottom, top, strict=True)):
            images = self.conv_input(source.data_on(side))
            version = source.data_memory.version
            out = self.conv_output(target.mutable_data_on(side))
            for chunk in self.image_chunks():
                self.convolve(side, images[chunk], out[chunk], bias, self.columns_of(index, version, chunk))

    def columns_of(self, index: int, version: int, chunk: slice) -> tuple[object, ...]:
        """What a chunk's columns are built from: bottom `index` at this data version, in this geometry."""
        return self.columns_token, index, version, chunk.start, chunk.stop, self.chunking_key

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Array,
                                    to_bottom: bool) -> None:
        """Per chunk: the weight gradient from the columns (rebuilt unless forward left them), then the
        bottom's."""
        images, diff = self.conv_input(source.data_on(side)), self.conv_output(top_diff)
        version = source.data_memory.version
        bottom_diff = self.conv_input(source.mutable_diff_on(side)) if to_bottom else None
        flipped = self.flipped_weights(side) if to_bottom and self.transposed_params is not None else None
        for chunk in self.image_chunks():
            diff_cols = None
            if self.param_propagate_down(0):
                diff_cols = self.weight_gradient(side, images[chunk], diff[chunk],
                                                 self.columns_of(index, version, chunk))
            if bottom_diff is not None:
                self.convolve_transposed(side, diff[chunk], bottom_diff[chunk], flipped, diff_cols)
