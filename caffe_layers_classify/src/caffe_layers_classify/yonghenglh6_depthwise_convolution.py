"""DepthwiseConvolution (yonghenglh6/DepthwiseConvolution): Caffe's convolution with group == channels.

The fork derives from Caffe's BaseConvolutionLayer, so convolution_param is read and checked exactly as
Caffe's Convolution reads it (axis, N spatial axes, kernel_size / kernel_h, stride, pad, dilation,
bias_term, fillers, one top per bottom), with Caffe's weight blob (num_output, 1, *kernel).

With `group` left unset the layer is depthwise too (the fork's GPU kernel, ncnn, OpenCV and MNN read it so,
and the models that leave it unset carry per-channel weights); the fork's CPU path would run a dense
convolution instead, so a stored dense weight is refused with an explanation of both.
"""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.layer_bases.convolution_blobs import set_up_convolution_blobs
from caffe_core.layer_bases.kernel_geometry import (
    check_convolution_bottoms,
    read_layer_geometry,
    refuse_empty_output,
    spatial_shape,
)
from caffe_layers_classify.depthwise_taps import DepthwiseTaps


class DepthwiseConvolutionLayer(Layer):
    """A depthwise (optionally depth-multiplied) convolution configured as Caffe's Convolution."""

    type = "DepthwiseConvolution"
    param_block = "convolution_param"
    min_bottom_blobs = 1
    min_top_blobs = 1
    equal_num_bottom_top_blobs = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads convolution_param as Caffe does, requires group == channels or unset, makes the blobs."""
        conv = self.layer_param.convolution_param
        self.channel_axis, self.geometry = read_layer_geometry(self, bottom[0])
        self.spatial_axes = len(self.geometry.kernel)
        self.channels = bottom[0].shape_at(self.channel_axis)
        self.num_output = int(conv.num_output)
        if self.num_output <= 0:
            raise self.error("convolution_param.num_output must be greater than 0")
        group_unset = not conv.HasField("group")
        if not group_unset and conv.group != self.channels:
            raise self.error(f"convolution_param.group ({conv.group}) must equal the input's channels "
                             f"({self.channels}) or be left unset: this layer is a depthwise convolution "
                             f"(use Convolution for other groupings)")
        if self.num_output % self.channels:
            raise self.error(f"convolution_param.num_output ({self.num_output}) must be a multiple of the "
                             f"input's channels ({self.channels})")
        self.bias_term = bool(conv.bias_term)
        weight_shape = (self.num_output, 1, *self.geometry.kernel)
        if group_unset and self.blobs and self.blobs[0].shape == (self.num_output, self.channels,
                                                                  *self.geometry.kernel) != weight_shape:
            raise self.error(dense_weight_message(self.blobs[0].shape, weight_shape))
        self.group_unset = group_unset
        set_up_convolution_blobs(self, conv, weight_shape, (self.num_output,))
        self.op = DepthwiseTaps(self.geometry)

    def stored_blob_advice(self, index: int, stored_shape: tuple[int, ...]) -> str | None:
        """With group unset, what a stored dense convolution weight means (the fork reads it two ways)."""
        weight_shape = self.blobs[0].shape
        dense_shape = (self.num_output, self.channels, *self.geometry.kernel)
        if index == 0 and self.group_unset and tuple(stored_shape) == dense_shape != weight_shape:
            return dense_weight_message(dense_shape, weight_shape)
        return None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Tops: the leading axes, num_output channels, and (in + 2 pad - extent) / stride + 1 per axis."""
        first = bottom[0]
        self.in_spatial = spatial_shape(self, first, self.channel_axis, self.geometry)
        check_convolution_bottoms(self, bottom, self.channel_axis, self.channels)
        self.num = first.count_between(0, self.channel_axis)
        self.out_spatial = self.geometry.conv_output_shape(self.in_spatial)
        refuse_empty_output(self, self.geometry, self.in_spatial, self.out_spatial)
        for blob in top:
            blob.reshape((*first.shape[: self.channel_axis], self.num_output, *self.out_spatial))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Each top = the depthwise convolution of its bottom (+ bias)."""
        weight = self.blobs[0].data_on(side)
        bias = self.blobs[1].data_on(side) if self.bias_term else None
        for source, target in zip(bottom, top, strict=True):
            x = source.data_on(side).reshape(self.num, self.channels, *self.in_spatial)
            out = target.mutable_data_on(side).reshape(self.num, self.num_output, *self.out_spatial)
            self.op.forward(side.xp, x, weight, bias, out)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Accumulates the bias and weight diffs over every top; writes the bottom diffs asked for."""
        xp = side.xp
        for index, (source, target) in enumerate(zip(bottom, top, strict=True)):
            top_diff = target.diff_on(side).reshape(self.num, self.num_output, *self.out_spatial)
            if self.bias_term and self.param_propagate_down(1):
                self.op.backward_bias(top_diff, self.blobs[1].mutable_diff_on(side))
            if self.param_propagate_down(0):
                x = source.data_on(side).reshape(self.num, self.channels, *self.in_spatial)
                self.op.backward_weight(xp, x, top_diff, self.blobs[0].mutable_diff_on(side))
            if propagate_down[index]:
                bottom_diff = source.mutable_diff_on(side).reshape(self.num, self.channels, *self.in_spatial)
                self.op.backward_data(xp, top_diff, self.blobs[0].data_on(side), bottom_diff)


def dense_weight_message(stored: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """Why a dense weight `stored` does not fit a group-unset layer's `expected` one, and the fixes."""
    _, channels, *kernel = stored
    first = [channels, 1, *kernel]
    return (f"The stored weight has shape {list(stored)}, a dense convolution's, but with "
            f"convolution_param.group unset this DepthwiseConvolution is depthwise and takes per-channel "
            f"weights of shape {list(expected)}. The fork computes two different things with a dense "
            f"blob: on the CPU an ordinary convolution over all {channels} input channels, on the GPU a "
            f"per-channel convolution with W[0] read as shape {first} (only for num_output == channels). "
            f"For the CPU result change the layer's type to Convolution (same weights); for per-channel "
            f"weights store them with shape {list(expected)}.")
