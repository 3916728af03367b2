"""ConvolutionDepthwise (farmingyard/caffe-mobilenet): a 2-D depthwise convolution, one filter per channel.

The fork reads only the geometry and bias_term of convolution_param: num_output and group are ignored
(the top has the bottom's channels), the weights are (channels, 1, kernel_h, kernel_w), and the blob is
read through Caffe's legacy num/channels/height/width accessors.
"""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.layer_bases.convolution_blobs import set_up_convolution_blobs
from caffe_core.layer_bases.kernel_geometry import KernelGeometry
from caffe_core.proto import caffe_pb2
from caffe_layers_classify.depthwise_taps import DepthwiseTaps


class ConvolutionDepthwiseLayer(Layer):
    """Each channel convolved with its own kernel (+ its bias); top channels = bottom channels."""

    type = "ConvolutionDepthwise"
    param_block = "convolution_param"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    # The fork reads the bottom through Caffe's legacy num/channels/height/width accessors.
    bottom_num_axes = {0: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the geometry with the fork's precedence rules and creates the weight and bias blobs."""
        conv = self.layer_param.convolution_param
        self.geometry = KernelGeometry(self._kernel(conv), self._pair(conv, "stride", 1),
                                       self._pair(conv, "pad", 0), self._dilation(conv))
        kernel, stride = self.geometry.kernel, self.geometry.stride
        if min(kernel) <= 0:
            raise self.error(f"convolution_param: the kernel must be nonzero (kernel {list(kernel)})")
        if min(stride) <= 0:
            raise self.error(f"convolution_param: the stride must be nonzero (stride {list(stride)})")
        self.channels = bottom[0].channels
        self.bias_term = bool(conv.bias_term)
        set_up_convolution_blobs(self, conv, (self.channels, 1, *self.geometry.kernel), (self.channels,))
        self.op = DepthwiseTaps(self.geometry)

    def _kernel(self, conv: caffe_pb2.ConvolutionParameter) -> tuple[int, int]:
        if conv.HasField("kernel_h") and conv.HasField("kernel_w"):
            return (conv.kernel_h, conv.kernel_w)
        if not conv.kernel_size:
            raise self.error("convolution_param: kernel_size (or both kernel_h and kernel_w) must be set")
        return self._first_two(list(conv.kernel_size))

    @staticmethod
    def _pair(conv: caffe_pb2.ConvolutionParameter, name: str, default: int) -> tuple[int, int]:
        if conv.HasField(f"{name}_h") and conv.HasField(f"{name}_w"):
            return (getattr(conv, f"{name}_h"), getattr(conv, f"{name}_w"))
        # The fork reads stride(0) / pad(0) even when none is given; Caffe's defaults stand in for that.
        values = list(getattr(conv, name))
        return ConvolutionDepthwiseLayer._first_two(values) if values else (default, default)

    def _dilation(self, conv: caffe_pb2.ConvolutionParameter) -> tuple[int, int]:
        return self._first_two(list(conv.dilation)) if conv.dilation else (1, 1)

    @staticmethod
    def _first_two(values: list[int]) -> tuple[int, int]:
        """One value for both axes, else the first two (h, w), as the fork reads repeated fields."""
        return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (num, channels, (in + 2 pad - extent) / stride + 1 per axis)."""
        num, channels, height, width = bottom[0].num, bottom[0].channels, bottom[0].height, bottom[0].width
        if channels != self.channels:
            raise self.error(f"the bottom has {channels} channels; the layer was set up for {self.channels}")
        g = self.geometry
        self.in_spatial = (height, width)
        if any(i + 2 * p < e for i, p, e in zip(self.in_spatial, g.pad, g.extent, strict=True)):
            raise self.error(f"kernel {list(g.kernel)} (dilation {list(g.dilation)}) is larger than the "
                             f"padded input {list(self.in_spatial)} + 2 * pad {list(g.pad)}")
        self.out_spatial = g.conv_output_shape(self.in_spatial)
        self.num = num
        top[0].reshape((num, channels, *self.out_spatial))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = per-channel convolution of the bottom, then + bias."""
        x = bottom[0].data_on(side).reshape(self.num, self.channels, *self.in_spatial)
        bias = self.blobs[1].data_on(side) if self.bias_term else None
        self.op.forward(side.xp, x, self.blobs[0].data_on(side), bias, top[0].mutable_data_on(side))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Accumulates the bias and weight diffs; writes the bottom diff if asked."""
        xp = side.xp
        top_diff = top[0].diff_on(side)
        if self.bias_term and self.param_propagate_down(1):
            self.op.backward_bias(top_diff, self.blobs[1].mutable_diff_on(side))
        if self.param_propagate_down(0):
            x = bottom[0].data_on(side).reshape(self.num, self.channels, *self.in_spatial)
            self.op.backward_weight(xp, x, top_diff, self.blobs[0].mutable_diff_on(side))
        if propagate_down[0]:
            bottom_diff = bottom[0].mutable_diff_on(side).reshape(self.num, self.channels, *self.in_spatial)
            self.op.backward_data(xp, top_diff, self.blobs[0].data_on(side), bottom_diff)
