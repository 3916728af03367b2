"""ONNX export of the mask unpooling layers (Upsample[unpool], MaxUnPool): onnxruntime gives the layers' own
outputs for masks of per-plane argmax positions, as a MAX Pooling layer's mask top holds them."""

import numpy as np
import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()


def _window_argmax(shape, out_size, kernel, stride, rng):
    """Float positions h * W_out + w in the output plane: a random tap of each pooling window, clipped to the
    plane as Caffe's pooling clips its windows."""
    num, channels, height, width = shape
    rows = np.arange(height)[:, None] * stride + rng.integers(0, kernel, (num, channels, height, width))
    cols = np.arange(width)[None, :] * stride + rng.integers(0, kernel, (num, channels, height, width))
    rows, cols = np.minimum(rows, out_size[0] - 1), np.minimum(cols, out_size[1] - 1)
    return (rows * out_size[1] + cols).astype(np.float32)


def _net(layer, shape, out_size, kernel, stride):
    net = one_layer_net(layer, {"pooled": shape, "mask": shape}, 5)
    rng = np.random.default_rng(6)
    net.blob_by_name("mask").data[...] = _window_argmax(shape, out_size, kernel, stride, rng)
    return net


def _upsample(params):
    return layer_text("Upsample", f"upsample_param {{ {params} }}", ("pooled", "mask"), name="up")


@pytest.mark.parametrize("opset", [13, newest_opset()])
@pytest.mark.parametrize(("params", "shape", "out_size", "kernel", "stride"), [
    ("", (2, 3, 4, 5), (8, 10), 2, 2),
    ("scale: 3", (1, 2, 3, 3), (9, 9), 3, 3),
    ("scale_h: 3 scale_w: 2", (2, 2, 3, 4), (9, 8), 2, 2),
    ("scale: 2 pad_out_h: true", (2, 3, 4, 5), (7, 10), 2, 2),
    ("scale: 2 pad_out_h: true pad_out_w: true", (1, 3, 4, 5), (7, 9), 2, 2),
    ("upsample_h: 9 upsample_w: 11", (2, 3, 4, 5), (9, 11), 3, 2),
])
def test_upsample_unpool(params, shape, out_size, kernel, stride, opset):
    net = _net(_upsample(params), shape, out_size, kernel, stride)
    model = assert_onnx_matches(net, opset)
    assert "ScatterElements" in op_types(model)


@pytest.mark.parametrize(("shape", "dst", "kernel", "stride"), [
    ((2, 3, 4, 5), (8, 10), 2, 2),
    ((2, 3, 4, 4), (9, 9), 3, 2),
    ((1, 1, 2, 2), (6, 5), 3, 3),
])
def test_max_unpool(shape, dst, kernel, stride):
    layer = layer_text("MaxUnPool", f"max_unpool_param {{ dst_h: {dst[0]} dst_w: {dst[1]} }}",
                       ("pooled", "mask"), name="unpool")
    assert_onnx_matches(_net(layer, shape, dst, kernel, stride))


def test_shared_positions_keep_the_last_value():
    # Overlapping 2x2 windows at stride 1 share positions: the last value written stays.
    net = _net(_upsample("upsample_h: 4 upsample_w: 4"), (1, 2, 3, 3), (4, 4), 2, 1)
    mask = net.blob_by_name("mask").data
    assert len(np.unique(mask[0, 0])) < mask[0, 0].size
    assert_onnx_matches(net)
