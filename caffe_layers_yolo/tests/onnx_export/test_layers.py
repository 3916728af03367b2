"""ONNX export of the yolo layers: onnxruntime gives Reorg's, Mish's (ONNX's Mish from opset 18,
Softplus/Tanh/Mul below), Region's and Pooling[darknet]'s own outputs; the detection outputs are refused,
naming the layer and its heads."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)
from caffe_layers_yolo import plugin

require_onnx()

from caffe_core import onnx_export

NEWEST = newest_opset()


@pytest.mark.parametrize(("shape", "stride", "reverse"), [
    ((2, 8, 4, 6), 2, False), ((1, 18, 3, 6), 3, False), ((1, 64, 26, 26), 2, False), ((2, 8, 4, 6), 2, True),
    ((1, 9, 2, 3), 3, True)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_reorg_is_reshape_transpose_reshape(shape, stride, reverse, opset):
    params = f"reorg_param {{ stride: {stride} reverse: {str(reverse).lower()} }}"
    net = one_layer_net(layer_text("Reorg", params), {"data": shape}, seed=1)
    model = assert_onnx_matches(net, opset)
    assert op_types(model) == ["Reshape", "Transpose", "Reshape"]


@pytest.mark.parametrize(("opset", "ops"), [(13, ["Softplus", "Tanh", "Mul"]),
                                            (17, ["Softplus", "Tanh", "Mul"]), (18, ["Mish"]),
                                            (NEWEST, ["Mish"])])
def test_mish(opset, ops):
    if opset > NEWEST:
        pytest.skip(f"the installed onnxruntime loads opsets up to {NEWEST}")
    net = one_layer_net(layer_text("Mish"), {"data": (2, 3, 4, 5)}, seed=2)
    data = net.blobs[net.blob_names.index("data")].data
    data[...] = np.random.default_rng(0).normal(0, 6, data.shape)
    model = assert_onnx_matches(net, opset)
    assert op_types(model) == ops


@pytest.mark.parametrize(("params", "shape"), [('anchors: "1,1, 2,2" classes: 3 num: 2', (2, 16, 3, 2)),
                                               ("classes: 3 num: 2 softmax: false", (2, 16, 3, 2)),
                                               ("classes: 1 num: 1 coords: 2", (2, 4, 3, 2))])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_region(params, shape, opset):
    net = one_layer_net(layer_text("Region", f"region_param {{ {params} }}"), {"data": shape}, seed=4)
    assert_onnx_matches(net, opset)


@pytest.mark.parametrize(("kernel", "stride", "shape"), [(2, 1, (1, 3, 13, 13)), (3, 2, (2, 2, 7, 9))])
def test_darknet_pooling_pads_to_the_extra_window(prefer_provider, kernel, stride, shape):
    prefer_provider("Pooling", "caffe-layers-yolo[darknet]")
    params = f"pooling_param {{ pool: MAX kernel_size: {kernel} stride: {stride} }}"
    net = one_layer_net(layer_text("Pooling", params), {"data": shape}, seed=3)
    windows = tuple(-(-(size - kernel) // stride) + 2 for size in shape[2:])
    assert net.blobs[-1].shape[2:] == windows
    assert op_types(assert_onnx_matches(net, NEWEST)) == ["MaxPool"]


@pytest.mark.parametrize(("type_name", "params", "shapes"), [
    ("YoloDetectionOutput", "yolo_detection_output_param { num_classes: 1 num_box: 1 biases: 1 biases: 1 }",
     {"h0": (1, 6, 2, 2)}),
    ("Yolov3DetectionOutput", "yolov3_detection_output_param { num_classes: 1 num_box: 1 mask_group_num: 1 "
     "mask: 0 anchors_scale: 8 biases: 4 biases: 4 }", {"h0": (1, 6, 2, 2)}),
])
def test_detection_outputs_are_refused_naming_the_layer_and_heads(type_name, params, shapes):
    net = one_layer_net(layer_text(type_name, params, tuple(shapes), ("det",), "detect"), shapes)
    with pytest.raises(OnnxExportError, match=rf"layer 'detect' \({type_name}\).*no exact ONNX equivalent"
                                              r".*ends at its heads \(h0\)"):
        onnx_export.to_model(net)


def test_every_type_has_a_converter():
    assert sorted(plugin.caffe_onnx_converters()) == ["Mish", "Pooling[darknet]", "Region", "Reorg",
                                                     "YoloDetectionOutput", "Yolov3DetectionOutput"]
