"""ONNX export of the SSD layers: onnxruntime gives Normalize's, Permute's and PriorBox's own outputs;
DetectionOutput is refused naming the layer; the training and evaluation layers have no converter."""

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
from caffe_layers_ssd import plugin

require_onnx()

import onnx

from caffe_core import onnx_export

NEWEST = newest_opset()


def layer_net(dims, type_name, params, seed=0):
    return one_layer_net(layer_text(type_name, params), {"data": dims}, seed)


@pytest.mark.parametrize("across", ["true", "false"])
@pytest.mark.parametrize("shared", ["true", "false"])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_normalize(across, shared, opset):
    net = layer_net((2, 3, 4, 5), "Normalize",
                        f"norm_param {{ across_spatial: {across} channel_shared: {shared} }}")
    assert_onnx_matches(net, opset)


@pytest.mark.parametrize("across", ["true", "false"])
def test_normalize_eps_under_the_root(across):
    net = layer_net((2, 3, 2, 2), "Normalize",
                        f"norm_param {{ across_spatial: {across} channel_shared: false eps: 0.75 }}")
    net.input_blobs[0].data[...] *= 0.1
    assert_onnx_matches(net)


@pytest.mark.parametrize("dims", [(3, 4), (2, 3, 5)])
@pytest.mark.parametrize("across", ["true", "false"])
def test_normalize_fewer_axes(dims, across):
    assert_onnx_matches(layer_net(dims, "Normalize", f"norm_param {{ across_spatial: {across} }}"))


@pytest.mark.parametrize(("dims", "order", "perm"), [
    ((2, 3, 4, 5), [0, 2, 3, 1], [0, 2, 3, 1]),
    ((2, 3, 4, 5), [0, 3], [0, 3, 1, 2]),
    ((2, 3, 4, 5), [2], [2, 0, 1, 3]),
    ((3, 4, 5), [2, 0, 1], [2, 0, 1]),
])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_permute(dims, order, perm, opset):
    params = "permute_param { " + " ".join(f"order: {axis}" for axis in order) + " }"
    model = assert_onnx_matches(layer_net(dims, "Permute", params), opset)
    [node] = model.graph.node
    assert node.op_type == "Transpose"
    assert list(onnx.helper.get_attribute_value(node.attribute[0])) == perm


@pytest.mark.parametrize("order", ["", "order: 0 order: 1"])
def test_permute_identity_order(order):
    model = assert_onnx_matches(layer_net((2, 3, 4), "Permute", f"permute_param {{ {order} }}"))
    assert op_types(model) == ["Identity"]


@pytest.mark.parametrize("params", [
    "min_size: 12 aspect_ratio: 2 flip: true variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2",
    "min_size: 10 min_size: 20 max_size: 25 max_size: 40 aspect_ratio: 2 aspect_ratio: 3 clip: true",
    "min_size: 7 aspect_ratio: 0.5 flip: false img_h: 40 img_w: 50 step_h: 9 step_w: 11 offset: 0.25",
    "min_size: 30 max_size: 60 img_size: 64 step: 16 clip: true variance: 0.2",
    "min_size: 30 max_size: 60 aspect_ratio: 2 aspect_ratio: 3 step: 16 denser_prior_boxes: true clip: false",
])
def test_prior_box(params):
    layer = layer_text("PriorBox", f"prior_box_param {{ {params} }}", ("feat", "img"), ("prior",), "pb")
    net = one_layer_net(layer, {"feat": (1, 4, 5, 6), "img": (1, 3, 60, 72)}, 1)
    model = assert_onnx_matches(net, opset=13)
    assert op_types(model) == ["Constant"]


def test_faceboxes_prior_box():
    """A FaceBoxes net's PriorBox layers (the densified one and a 256 one) convert by `PriorBox[faceboxes]`:
    Constants holding FaceBoxes' priors (21 per cell, half size 127.5)."""
    layers = "".join(layer_text("PriorBox", f"prior_box_param {{ {params} }}", ("feat", "img"), (top,), top)
                     for top, params in [("dense", "min_size: 32 min_size: 64 min_size: 128 step: 32"),
                                         ("big", "min_size: 256 step: 64")])
    net = one_layer_net(layers, {"feat": (1, 4, 2, 3), "img": (1, 3, 64, 96)}, 1)
    assert [type(layer).__name__ for layer in net.layers[-2:]] == ["FaceBoxesPriorBoxLayer"] * 2
    model = assert_onnx_matches(net, opset=13)
    assert sorted(set(op_types(model))) == ["Constant", "Identity"]  # Identity: the Splits of feat and img
    assert op_types(model).count("Constant") == 2
    assert net.blob_by_name("dense").shape == (1, 2, 2 * 3 * 21 * 4)
    assert net.blob_by_name("big").data[0, 0, 2] * 96 == pytest.approx(32 + 127.5)


def test_detection_output_is_refused_naming_the_layer():
    priors, classes = 6, 3
    params = "detection_output_param { num_classes: 3 nms_param { nms_threshold: 0.45 } keep_top_k: 10 }"
    layer = layer_text("DetectionOutput", params, ("loc", "conf", "prior"), name="detect")
    inputs = {"loc": (2, priors * 4), "conf": (2, priors * classes), "prior": (1, 2, priors * 4)}
    net = one_layer_net(layer, inputs)
    with pytest.raises(OnnxExportError, match=r"layer 'detect' \(DetectionOutput\).*no exact ONNX equivalent"
                                              r".*ends at its bottoms \(loc, conf, prior;"):
        onnx_export.to_model(net)


def test_refinedets_detection_output_is_refused_naming_its_bottoms():
    priors, classes = 6, 3
    params = "detection_output_param { num_classes: 3 code_type: CENTER_SIZE keep_top_k: 10 }"
    bottoms = ("odm_loc", "odm_conf", "arm_priorbox", "arm_conf", "arm_loc")
    layer = layer_text("DetectionOutput", params, bottoms, name="detect")
    inputs = {"odm_loc": (1, priors * 4), "odm_conf": (1, priors * classes),
              "arm_priorbox": (1, 2, priors * 4), "arm_conf": (1, priors * 2), "arm_loc": (1, priors * 4)}
    net = one_layer_net(layer, inputs)
    with pytest.raises(OnnxExportError, match=r"layer 'detect' \(DetectionOutput\).*RefineDet's\) has no "
                                              r"exact ONNX equivalent.*ends at its bottoms \(odm_loc, "
                                              r"odm_conf, arm_priorbox, arm_conf, arm_loc;"):
        onnx_export.to_model(net)


@pytest.mark.parametrize(("polygon", "values", "width"), [("true", 12, 15), ("false", 9, 12)])
def test_textboxes_detection_output_is_refused(polygon, values, width):
    priors = 6
    params = f"detection_output_param {{ num_classes: 2 code_type: CENTER_SIZE use_polygon: {polygon} }}"
    layer = layer_text("DetectionOutput", params, ("loc", "conf", "prior"), name="detect")
    inputs = {"loc": (1, priors * values), "conf": (1, priors * 2), "prior": (1, 2, priors * 4)}
    net = one_layer_net(layer, inputs)
    with pytest.raises(OnnxExportError, match=r"layer 'detect' \(DetectionOutput\).*TextBoxes\+\+'s\) has "
                                              rf"no exact ONNX equivalent.*\[1, 1, N, {width}\].*ends at its "
                                              r"bottoms \(loc, conf, prior\)"):
        onnx_export.to_model(net)


def test_training_and_evaluation_layers_have_no_converter():
    converters = plugin.caffe_onnx_converters()
    assert sorted(converters) == ["DetectionOutput", "DetectionOutput[refinedet]",
                                  "DetectionOutput[textboxes]", "Normalize", "Permute", "PriorBox",
                                  "PriorBox[faceboxes]"]
