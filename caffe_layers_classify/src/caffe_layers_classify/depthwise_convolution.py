"""DepthwiseConvolution (yonghenglh6/DepthwiseConvolution): Caffe's convolution with group == channels.

The fork derives from Caffe's BaseConvolutionLayer, so convolution_param is read and checked exactly as
Caffe's Convolution reads it (axis, N spatial axes, kernel_size / kernel_h, stride, pad, dilation,
bias_term, fillers, one top per bottom), with Caffe's weight blob (num_output, 1, *kernel).
"""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_classify.depthwise import Depthwise, DepthwiseGeometry, learnable_blobs


class DepthwiseConvolutionLayer(Layer):
    """A depthwise (optionally depth-multiplied) convolution configured as Caffe's Convolution."""

    type = "DepthwiseConvolution"
    param_block = "convolution_param"
    min_bottom_blobs = 1
    min_top_blobs = 1
    equal_num_bottom_top_blobs = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads convolution_param with Caffe's checks, requires group == channels, creates the blobs."""
        conv = self.layer_param.convolution_param
        try:
            self.channel_axis = bottom[0].canonical_axis_index(conv.axis)
        except ValueError as err:
            raise self.error(f"convolution_param.axis: {err}") from err
        self.spatial_axes = bottom[0].num_axes - self.channel_axis - 1
        self.geometry = DepthwiseGeometry(self._kernel(conv), self._hw_or_list(conv, "stride", 1),
                                          self._hw_or_list(conv, "pad", 0), self._dilation(conv))
        if any(s <= 0 for s in self.geometry.stride):
            raise self.error(f"stride dimensions must be nonzero (stride {list(self.geometry.stride)})")
        self.channels = bottom[0].shape_at(self.channel_axis)
        self.num_output = int(conv.num_output)
        if self.num_output <= 0:
            raise self.error("convolution_param.num_output must be greater than 0")
        if conv.group != self.channels:
            raise self.error(f"convolution_param.group ({conv.group}) must equal the input's channels "
                             f"({self.channels}): this layer is a depthwise convolution (use Convolution for "
                             f"other groupings)")
        if self.num_output % self.channels:
            raise self.error(f"convolution_param.num_output ({self.num_output}) must be a multiple of group "
                             f"({conv.group})")
        self.bias_term = bool(conv.bias_term)
        learnable_blobs(self, conv, (self.num_output, 1, *self.geometry.kernel),
                        "incorrect number of weight blobs: expected {expected} (convolution_param.bias_term "
                        "{bias_term}), got {got}",
                        "incorrect {name} shape: expected shape {expected}; instead, shape was {got}")
        self.op = Depthwise(self.geometry)

    def _kernel(self, conv: caffe_pb2.ConvolutionParameter) -> tuple[int, ...]:
        if conv.HasField("kernel_h") or conv.HasField("kernel_w"):
            kernel = self._hw_or_list(conv, "kernel", 0)
        else:
            if len(conv.kernel_size) not in (1, self.spatial_axes):
                raise self.error(f"convolution_param.kernel_size must be specified once, or once per spatial "
                                 f"dimension (kernel_size specified {len(conv.kernel_size)} times; "
                                 f"{self.spatial_axes} spatial dims)")
            kernel = self._per_axis(list(conv.kernel_size), "kernel_size", 0)
        if any(k <= 0 for k in kernel):
            raise self.error(f"filter dimensions must be nonzero (kernel {list(kernel)})")
        return kernel

    def _hw_or_list(self, conv: caffe_pb2.ConvolutionParameter, name: str, default: int) -> tuple[int, ...]:
        listed = "kernel_size" if name == "kernel" else name
        if conv.HasField(f"{name}_h") or conv.HasField(f"{name}_w"):
            if self.spatial_axes != 2:
                raise self.error(f"convolution_param.{name}_h & {name}_w can only be used for 2D convolution")
            if len(getattr(conv, listed)):
                raise self.error(f"convolution_param: either {listed} or {name}_h/w should be specified; "
                                 f"not both")
            return (int(getattr(conv, f"{name}_h")), int(getattr(conv, f"{name}_w")))
        return self._per_axis(list(getattr(conv, listed)), listed, default)

    def _dilation(self, conv: caffe_pb2.ConvolutionParameter) -> tuple[int, ...]:
        return self._per_axis(list(conv.dilation), "dilation", 1)

    def _per_axis(self, values: list[int], name: str, default: int) -> tuple[int, ...]:
        if len(values) not in (0, 1, self.spatial_axes):
            raise self.error(f"convolution_param.{name} must be specified once, or once per spatial "
                             f"dimension ({name} specified {len(values)} times; {self.spatial_axes} spatial "
                             f"dims)")
        if not values:
            return (default,) * self.spatial_axes
        return tuple(int(values[0 if len(values) == 1 else i]) for i in range(self.spatial_axes))

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Tops: the leading axes, num_output channels, and (in + 2 pad - extent) / stride + 1 per axis."""
        first = bottom[0]
        axes = self.channel_axis + 1 + self.spatial_axes
        if first.num_axes != axes:
            raise self.error(f"bottom num_axes may not change (was {axes}, now {first.num_axes})")
        if first.shape_at(self.channel_axis) != self.channels:
            raise self.error(f"input size incompatible with convolution kernel: expected {self.channels} "
                             f"channels, got {first.shape_at(self.channel_axis)}")
        for index, blob in enumerate(bottom[1:], start=1):
            if blob.shape != first.shape:
                raise self.error(f"all inputs must have the same shape: bottom {index} is "
                                 f"{list(blob.shape)}, bottom 0 is {list(first.shape)}")
        self.num = first.count_between(0, self.channel_axis)
        self.in_spatial = tuple(first.shape[self.channel_axis + 1:])
        g = self.geometry
        # C++ int division truncates toward zero, as Caffe's compute_output_shape divides.
        self.out_spatial = tuple(int((i + 2 * p - e) / s) + 1 for i, p, e, s
                                 in zip(self.in_spatial, g.pad, g.extent, g.stride, strict=True))
        if any(o <= 0 for o in self.out_spatial):
            raise self.error(f"kernel {list(g.kernel)} (dilation {list(g.dilation)}) is larger than the "
                             f"padded input {list(self.in_spatial)} + 2 * pad {list(g.pad)}: the output "
                             f"shape would be {list(self.out_spatial)}")
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
