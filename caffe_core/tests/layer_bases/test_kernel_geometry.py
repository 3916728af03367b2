"""Kernel geometry: extents and output sizes by hand, Caffe's per-axis broadcasting, shape refusals."""

import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import Layer
from caffe_core.layer_bases.kernel_geometry import (
    KernelGeometry,
    check_convolution_bottoms,
    read_kernel_geometry,
    read_layer_geometry,
    refuse_empty_output,
    spatial_shape,
)
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


def conv_param(text: str) -> caffe_pb2.ConvolutionParameter:
    """A ConvolutionParameter from text format."""
    return parse_text(text, caffe_pb2.ConvolutionParameter(), source="<test param>")


def raise_plain(message: str) -> LayerSetupError:
    """The error builder read_kernel_geometry is given: the message alone."""
    return LayerSetupError(message)


def test_extent_and_output_shape():
    """Extent d (k - 1) + 1; output (in + 2 pad - extent) // stride + 1."""
    params = KernelGeometry(kernel=(3, 2), stride=(2, 1), pad=(1, 0), dilation=(2, 3))
    assert params.extent == (5, 4)
    assert params.conv_output_shape((9, 7)) == ((9 + 2 - 5) // 2 + 1, 7 - 4 + 1)
    assert not params.is_1x1
    assert KernelGeometry((1, 1), (1, 1), (0, 0), (4, 4)).is_1x1


def test_output_size_rounds_toward_zero_as_caffe():
    """Kernel 3, stride 2 on 2: (2 - 3) / 2 is 0 in C++, so one window, over an input widened to 3."""
    params = KernelGeometry(kernel=(3, 4), stride=(2, 2), pad=(0, 0), dilation=(1, 1))
    assert params.conv_output_shape((2, 2)) == (1, 0)
    assert params.padded_shape((2, 5), (1, 1)) == (3, 5)


def test_one_value_serves_every_axis():
    params = read_kernel_geometry(conv_param("kernel_size: 3 stride: 2"), 3, raise_plain)
    assert params == KernelGeometry((3, 3, 3), (2, 2, 2), (0, 0, 0), (1, 1, 1))


def test_values_per_axis_and_h_w_fields():
    params = read_kernel_geometry(conv_param("kernel_size: 3 kernel_size: 2 pad: 1 pad: 0 dilation: 2"), 2,
                                 raise_plain)
    assert params == KernelGeometry((3, 2), (1, 1), (1, 0), (2, 2))
    text = "kernel_h: 3 kernel_w: 1 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0"
    params = read_kernel_geometry(conv_param(text), 2, raise_plain)
    assert params == KernelGeometry((3, 1), (2, 1), (1, 0), (1, 1))


@pytest.mark.parametrize(("text", "axes", "message"), [
    ("kernel_size: 3 stride: 1 stride: 2", 3, r"stride specified 2 times; 3 spatial dims"),
    ("kernel_size: 3 dilation: 0", 2, "dilation dimensions must be nonzero"),
    ("kernel_h: 3", 2, "filter dimensions must be nonzero"),
    ("kernel_size: 3 pad_h: 1 pad_w: 1", 3, "pad_h & pad_w can only be used for 2D convolution"),
])
def test_refusals(text, axes, message):
    with pytest.raises(LayerSetupError, match=message):
        read_kernel_geometry(conv_param(text), axes, raise_plain)


def conv_layer(text: str) -> Layer:
    """A bare layer whose convolution_param is `text`."""
    return Layer(parse_text(f"name: 'conv' type: 'Convolution' convolution_param {{ {text} }}",
                            caffe_pb2.LayerParameter()))


def test_taps_count_the_kernel_offsets():
    assert KernelGeometry((3, 2, 2), (1, 1, 1), (0, 0, 0), (2, 1, 1)).taps == 12


def test_the_layer_geometry_starts_after_the_channel_axis():
    channel_axis, params = read_layer_geometry(conv_layer("kernel_size: 3 axis: -3"), Blob((2, 3, 4, 5, 6)))
    assert channel_axis == 2
    assert params.kernel == (3, 3)


def test_a_channel_axis_out_of_range_names_the_field():
    with pytest.raises(LayerSetupError, match=r"layer 'conv'.*convolution_param.axis: axis 4 out of range"):
        read_layer_geometry(conv_layer("kernel_size: 3 axis: 4"), Blob((2, 3, 4, 5)))


def test_a_bottom_may_not_change_its_number_of_axes():
    layer = conv_layer("kernel_size: 2")
    channel_axis, params = read_layer_geometry(layer, Blob((2, 3, 4, 4)))
    assert spatial_shape(layer, Blob((2, 3, 4, 6)), channel_axis, params) == (4, 6)
    with pytest.raises(LayerSetupError, match=r"layer 'conv'.*num_axes may not change \(was 4, now 5\)"):
        spatial_shape(layer, Blob((2, 3, 4, 4, 4)), channel_axis, params)


def test_an_empty_output_is_refused_with_its_shape():
    layer = conv_layer("kernel_size: 5")
    params = read_layer_geometry(layer, Blob((1, 1, 4, 6)))[1]
    refuse_empty_output(layer, params, (5, 6), params.conv_output_shape((5, 6)))
    with pytest.raises(LayerSetupError, match=r"layer 'conv'.*the output shape would be \[0, 2\]"):
        refuse_empty_output(layer, params, (4, 6), params.conv_output_shape((4, 6)))


def test_convolution_bottoms_keep_their_channels_and_share_one_shape():
    layer = conv_layer("kernel_size: 1")
    check_convolution_bottoms(layer, [Blob((2, 3, 4)), Blob((2, 3, 4))], 1, 3)
    with pytest.raises(LayerSetupError, match=r"layer 'conv'.*expected 3 channels, got 4"):
        check_convolution_bottoms(layer, [Blob((2, 4, 4))], 1, 3)
    with pytest.raises(LayerSetupError, match=r"bottom 1 is \[2, 3, 5\], bottom 0 is \[2, 3, 4\]"):
        check_convolution_bottoms(layer, [Blob((2, 3, 4)), Blob((2, 3, 5))], 1, 3)
