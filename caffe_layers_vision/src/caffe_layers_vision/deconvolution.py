"""Caffe's Deconvolution layer: convolution's backward-data pass used as a forward pass."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_layers_vision.base_convolution import BaseConvolutionLayer


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
        """Per chunk of images: convolution's transpose of the bottom, plus the bias."""
        bias = self.blobs[1].data_on(side)[None, :, None] if self.bias_term else None
        flipped = self.flipped_weights(side) if self.transposed_params is not None else None
        for source, target in zip(bottom, top, strict=True):
            images = self.conv_output(source.data_on(side))
            out = self.conv_input(target.mutable_data_on(side))
            for chunk in self.image_chunks():
                self.convolve_transposed(side, images[chunk], out[chunk], flipped)
                if bias is not None:
                    out[chunk].reshape(chunk.stop - chunk.start, self.num_output, -1)[...] += bias

    def weight_and_bottom_gradients(self, side: Side, index: int, source: Blob, top_diff: Array,
                                    to_bottom: bool) -> None:
        """Per chunk: the weight gradient from the top diff's columns, the bottom's by convolving it."""
        diff, images = self.conv_input(top_diff), self.conv_output(source.data_on(side))
        bottom_diff = self.conv_output(source.mutable_diff_on(side)) if to_bottom else None
        for chunk in self.image_chunks():
            if self.param_propagate_down(0):
                self.weight_gradient(side, diff[chunk], images[chunk])
            if bottom_diff is not None:
                self.convolve(side, diff[chunk], bottom_diff[chunk], None)
