"""ONNX export of Pooling: Caffe's window counts, clipping, divisors and mask top in onnxruntime."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    onnxruntime_outputs,
    op_types,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export

GEOMETRIES = [
    (6, 6, "kernel_size: 2 stride: 2"),
    (7, 7, "kernel_size: 3 stride: 2"),
    (7, 6, "kernel_size: 3 stride: 2 pad: 1"),
    (8, 9, "kernel_size: 3 stride: 2 pad: 2"),
    (5, 5, "kernel_size: 3 stride: 1 pad: 1"),
    (6, 7, "kernel_size: 3 stride: 3 pad: 1"),
    (5, 7, "kernel_size: 1 stride: 3"),
    (5, 8, "kernel_size: 2 stride: 3 pad: 1"),
    (9, 7, "kernel_h: 3 kernel_w: 2 stride_h: 2 stride_w: 1 pad_h: 1 pad_w: 0"),
    (6, 9, "kernel_h: 2 kernel_w: 4 stride_h: 3 stride_w: 2 pad_h: 0 pad_w: 2"),
    (14, 14, "kernel_size: 3 stride: 2"),
    (3, 2, "kernel_size: 3 stride: 2"),
    (5, 7, "kernel_size: 3 stride: 2 pad: 1 round_mode: FLOOR"),
    (6, 6, "kernel_size: 2 stride: 3 round_mode: FLOOR"),
    (5, 6, "global_pooling: true"),
]
# Unpadded, with the stride longer than the kernel, a last window can start at the input's end: Caffe's AVE
# divides its empty sum by 0.
EMPTY_WINDOW_GEOMETRIES = [
    (5, 6, "kernel_size: 2 stride: 3"),
    (4, 4, "kernel_size: 1 stride: 2"),
]


def pooling_net(height: int, width: int, pool: str, params: str, mask: bool = False,
                phase: int = caffe_pb2.TEST):
    """A net of one Pooling layer on a (2, 3, height, width) input; with `mask`, its argmax top too."""
    tops = ("out", "mask") if mask else ("out",)
    layer = layer_text("Pooling", f"pooling_param {{ pool: {pool} {params} }}", tops=tops, name="pool")
    return one_layer_net(layer, {"data": (2, 3, height, width)}, height * 10 + width, phase)


@pytest.mark.parametrize("pool", ["MAX", "AVE"])
@pytest.mark.parametrize(("height", "width", "params"), GEOMETRIES)
def test_pooling(height, width, params, pool):
    assert_onnx_matches(pooling_net(height, width, pool, params))


@pytest.mark.parametrize(("height", "width", "params"), EMPTY_WINDOW_GEOMETRIES)
def test_empty_windows(height, width, params):
    assert_onnx_matches(pooling_net(height, width, "MAX", params))
    net = pooling_net(height, width, "AVE", params)
    model = onnx_export.to_model(net)
    feeds = {"data": np.array(net.input_blobs[0].data)}
    with np.errstate(invalid="ignore"):
        net.forward()
    want = net.blob_by_name("out").data
    got = onnxruntime_outputs(model, feeds)["out"]
    assert np.isnan(want).any()
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.nanmax(np.abs(want)) + 1e-5, equal_nan=True)


@pytest.mark.parametrize(("height", "width", "params"), GEOMETRIES + EMPTY_WINDOW_GEOMETRIES)
def test_max_mask(height, width, params):
    assert_onnx_matches(pooling_net(height, width, "MAX", params, mask=True))


@pytest.mark.parametrize(("height", "width", "params"), GEOMETRIES[:8])
def test_max_mask_takes_the_first_of_tied_elements_as_caffe_does(height, width, params):
    net = pooling_net(height, width, "MAX", params, mask=True)
    # Few distinct values, as ReLU's zeros or saturated pixels give: most windows hold ties.
    values = np.random.default_rng(5).integers(-1, 2, net.input_blobs[0].shape)
    net.input_blobs[0].data[...] = np.maximum(values, 0)
    assert_onnx_matches(net)


@pytest.mark.parametrize(("height", "width", "params"), [
    (6, 6, "kernel_size: 2 stride: 2"),
    (7, 7, "kernel_size: 3 stride: 2"),
    (5, 6, "kernel_size: 2 stride: 3"),
    (5, 7, "kernel_size: 1 stride: 3"),
    (5, 6, "global_pooling: true"),
])
def test_stochastic_test_phase(height, width, params):
    net = pooling_net(height, width, "STOCHASTIC", params)
    # Stochastic pooling is meant for non-negative inputs (after a ReLU); sums near 0 are ill-conditioned.
    net.input_blobs[0].data[...] = np.abs(net.input_blobs[0].data) + 0.1
    assert_onnx_matches(net)


def test_stochastic_train_phase_is_refused():
    net = pooling_net(6, 6, "STOCHASTIC", "kernel_size: 2 stride: 2", phase=caffe_pb2.TRAIN)
    with pytest.raises(OnnxExportError, match="STOCHASTIC pooling samples"):
        onnx_export.to_model(net)


@pytest.mark.parametrize(("params", "ops"), [
    ("kernel_size: 3 stride: 2 pad: 1", ["MaxPool"]),
    ("kernel_size: 1 stride: 3", ["Pad", "MaxPool"]),
    ("global_pooling: true", ["GlobalMaxPool"]),
])
def test_max_nodes(params, ops):
    model = assert_onnx_matches(pooling_net(8, 8, "MAX", params))
    assert op_types(model) == ops


@pytest.mark.parametrize(("params", "ops"), [
    ("kernel_size: 3 stride: 1 pad: 1", ["AveragePool"]),
    ("kernel_size: 3 stride: 2", ["AveragePool"]),
    ("kernel_size: 3 stride: 2 pad: 1", ["AveragePool", "Mul"]),
    ("global_pooling: true", ["GlobalAveragePool"]),
])
def test_average_nodes(params, ops):
    model = assert_onnx_matches(pooling_net(8, 8, "AVE", params))
    assert op_types(model) == ops


@pytest.mark.parametrize("opset", [onnx_export.MIN_OPSET, newest_opset()])
@pytest.mark.parametrize("params", ["kernel_size: 3 stride: 2 pad: 1", "kernel_size: 2 stride: 3 pad: 1"])
def test_opsets(opset, params):
    assert_onnx_matches(pooling_net(7, 8, "AVE", params), opset)
    assert_onnx_matches(pooling_net(7, 8, "MAX", params, mask=True), opset)
