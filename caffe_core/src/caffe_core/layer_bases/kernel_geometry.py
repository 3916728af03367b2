"""KernelGeometry: the N-D kernel, stride, pad and dilation of a ConvolutionParameter, read and checked as
Caffe's BaseConvolutionLayer reads them, and the output shape they give."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


@dataclasses.dataclass(frozen=True)
class KernelGeometry:
    """Per spatial axis kernel, stride, pad and dilation."""

    kernel: tuple[int, ...]
    stride: tuple[int, ...]
    pad: tuple[int, ...]
    dilation: tuple[int, ...]

    @property
    def extent(self) -> tuple[int, ...]:
        """The dilated kernel size along each axis."""
        return tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation, strict=True))

    @property
    def taps(self) -> int:
        """The number of kernel taps (offsets in the kernel)."""
        return math.prod(self.kernel)

    @property
    def is_1x1(self) -> bool:
        """Whether im2col is the identity: every kernel 1, stride 1, pad 0."""
        return all(k == 1 for k in self.kernel) and all(s == 1 for s in self.stride) and not any(self.pad)

    def conv_output_shape(self, input_shape: tuple[int, ...]) -> tuple[int, ...]:
        """Convolution's output size per axis: (in + 2 pad - extent) / stride + 1, divided as C++ ints do."""
        # Rounding toward zero, a kernel overhanging the padded input by less than the stride has one window.
        return tuple(int((i + 2 * p - e) / s) + 1
                     for i, p, e, s in zip(input_shape, self.pad, self.extent, self.stride, strict=True))

    def padded_shape(self, input_shape: tuple[int, ...], output_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The zero-padded input's size per axis, widened where the last window overhangs it."""
        return tuple(max(i + 2 * p, (o - 1) * s + e) for i, p, o, s, e in
                     zip(input_shape, self.pad, output_shape, self.stride, self.extent, strict=True))


def _per_axis(values: list[int], name: str, default: int, axes: int,
              error: Callable[[str], LayerSetupError]) -> tuple[int, ...]:
    if len(values) not in (0, 1, axes):
        raise error(f"{name} must be specified once, or once per spatial dimension "
                    f"({name} specified {len(values)} times; {axes} spatial dims)")
    if not values:
        return (default,) * axes
    return tuple(int(values[0 if len(values) == 1 else i]) for i in range(axes))


def _hw_or_list(conv: caffe_pb2.ConvolutionParameter, name: str, prefix: str, default: int, axes: int,
                error: Callable[[str], LayerSetupError]) -> tuple[int, ...]:
    h_field, w_field = f"{prefix}_h", f"{prefix}_w"
    listed = list(getattr(conv, name))
    if conv.HasField(h_field) or conv.HasField(w_field):
        if axes != 2:
            raise error(f"{h_field} & {w_field} can only be used for 2D convolution "
                        f"(the input has {axes} spatial axes)")
        if listed:
            raise error(f"either {name} or {h_field}/{w_field} should be specified; not both")
        return (int(getattr(conv, h_field)), int(getattr(conv, w_field)))
    return _per_axis(listed, name, default, axes, error)


def read_kernel_geometry(conv: caffe_pb2.ConvolutionParameter, axes: int,
                         error: Callable[[str], LayerSetupError]) -> KernelGeometry:
    """Reads kernel/stride/pad/dilation for `axes` spatial axes with Caffe's checks; `error` builds errors."""
    if conv.HasField("kernel_h") or conv.HasField("kernel_w"):
        kernel = _hw_or_list(conv, "kernel_size", "kernel", 0, axes, error)
    else:
        if len(conv.kernel_size) not in (1, axes):
            raise error(f"kernel_size must be specified once, or once per spatial dimension "
                        f"(kernel_size specified {len(conv.kernel_size)} times; {axes} spatial dims)")
        kernel = _per_axis(list(conv.kernel_size), "kernel_size", 0, axes, error)
    if any(k <= 0 for k in kernel):
        raise error(f"filter dimensions must be nonzero (kernel {list(kernel)})")
    stride = _hw_or_list(conv, "stride", "stride", 1, axes, error)
    if any(s <= 0 for s in stride):
        raise error(f"stride dimensions must be nonzero (stride {list(stride)})")
    pad = _hw_or_list(conv, "pad", "pad", 0, axes, error)
    dilation = _per_axis(list(conv.dilation), "dilation", 1, axes, error)
    if any(d <= 0 for d in dilation):
        raise error(f"dilation dimensions must be nonzero (dilation {list(dilation)})")
    return KernelGeometry(kernel, stride, pad, dilation)


def read_layer_geometry(layer: Layer, bottom: Blob) -> tuple[int, KernelGeometry]:
    """The channel axis convolution_param names in `bottom`, and the geometry of the spatial axes after it."""
    conv = layer.layer_param.convolution_param
    try:
        channel_axis = bottom.canonical_axis_index(conv.axis)
    except ValueError as err:
        raise layer.error(f"convolution_param.axis: {err}") from err
    return channel_axis, read_kernel_geometry(conv, bottom.num_axes - channel_axis - 1, layer.error)


def spatial_shape(layer: Layer, bottom: Blob, channel_axis: int, params: KernelGeometry) -> tuple[int, ...]:
    """The sizes of `bottom` after the channel axis; its number of axes may not change after setup."""
    expected = channel_axis + 1 + len(params.kernel)
    if bottom.num_axes != expected:
        raise layer.error(f"bottom num_axes may not change (was {expected}, now {bottom.num_axes})")
    return tuple(bottom.shape[channel_axis + 1:])


def check_convolution_bottoms(layer: Layer, bottom: Sequence[Blob], channel_axis: int, channels: int) -> None:
    """Refuses bottoms whose channels differ from those set up for, or whose shapes differ from bottom 0's."""
    if bottom[0].shape_at(channel_axis) != channels:
        raise layer.error(f"input size incompatible with convolution kernel: expected {channels} "
                          f"channels, got {bottom[0].shape_at(channel_axis)}")
    for index, blob in enumerate(bottom[1:], start=1):
        if blob.shape != bottom[0].shape:
            raise layer.error(f"all inputs must have the same shape: bottom {index} is "
                              f"{list(blob.shape)}, bottom 0 is {list(bottom[0].shape)}")


def refuse_empty_output(layer: Layer, params: KernelGeometry, spatial: tuple[int, ...],
                        out_spatial: tuple[int, ...]) -> None:
    """Refuses a geometry whose output has an axis of size 0 or less."""
    if any(size <= 0 for size in out_spatial):
        raise layer.error(f"kernel {list(params.kernel)} (dilation {list(params.dilation)}) is larger than "
                          f"the padded input {list(spatial)} + 2 * pad {list(params.pad)}: the output shape "
                          f"would be {list(out_spatial)}")
