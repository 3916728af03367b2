"""ONNX export of the rcnn layers: onnxruntime gives ROIPooling's (pad_ratio too), PSROIPooling's, scale_train
Dropout's and TEST-phase DecodeBBox's own outputs; Proposal, ROIAlign, BoxGroupOutput, ScaleRoute and
TRAIN-phase Dropout and DecodeBBox are refused naming the layer; SmoothL1Loss has none."""

import numpy as np
import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)
from caffe_layers_rcnn import plugin

require_onnx()

from caffe_core import onnx_export

NEWEST = newest_opset()


def roi_net(type_name, params, feature_dims, rois_dims, rois, seed=0):
    """Features and rois as inputs, the pooling layer on them; random features, the given rois."""
    layer = layer_text(type_name, params, ("x", "rois"), ("y",), "pool")
    net = one_layer_net(layer, {"x": feature_dims, "rois": rois_dims}, seed)
    net.blobs[net.blob_names.index("rois")].data[...] = np.reshape(rois, rois_dims)
    return net


def random_rois(rng, count, num, height, width, scale):
    """Boxes (batch index, x1, y1, x2, y2) in image pixels, some reaching past the map, some inverted."""
    rois = np.empty((count, 5), dtype=np.float32)
    rois[:, 0] = rng.integers(0, num, count)
    rois[:, 1:] = rng.uniform(-0.3, 1.3, (count, 4)) * np.array([width, height, width, height]) / scale
    # Halfway points after scaling, where C's round() goes away from zero.
    rois[:3, 1:] = np.round(rois[:3, 1:] * scale * 2) / (scale * 2)
    return rois


@pytest.mark.parametrize(("pooled", "scale"), [((6, 6), 1.0), ((2, 3), 0.5), ((3, 2), 0.0625),
                                               ((1, 1), 0.25)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_roi_pooling(pooled, scale, opset):
    rois = random_rois(np.random.default_rng(1), 8, 2, 9, 11, scale)
    net = roi_net("ROIPooling", f"roi_pooling_param {{ pooled_h: {pooled[0]} pooled_w: {pooled[1]} "
                                f"spatial_scale: {scale} }}", (2, 3, 9, 11), (8, 5), rois)
    assert_onnx_matches(net, opset)


@pytest.mark.parametrize(("opset", "op_type"), [(21, "MaxRoiPool"), (22, "Loop")])
def test_roi_pooling_is_max_roi_pool_until_its_opset_22_revision(opset, op_type):
    rois = [[0, 1, 1, 6, 6], [2, 6, 2, 7, 11], [1, 3, 1, 5, 10], [0, 3, 3, 3, 3]]
    net = roi_net("ROIPooling", "roi_pooling_param { pooled_h: 6 pooled_w: 6 spatial_scale: 1 }",
                  (4, 3, 12, 8), (4, 5, 1, 1), rois)
    model = assert_onnx_matches(net, opset)
    assert op_type in op_types(model)


@pytest.mark.parametrize(("output_dim", "group_size", "scale"), [(2, 3, 1.0), (3, 2, 0.5), (1, 1, 0.0625),
                                                                 (2, 4, 0.25)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_psroi_pooling(output_dim, group_size, scale, opset):
    channels = output_dim * group_size * group_size
    rois = random_rois(np.random.default_rng(2), 7, 2, 9, 10, scale)
    rois[3, 3:] = rois[3, 1:3]  # a one-pixel ROI, widened to 0.1 of a pixel per side
    net = roi_net("PSROIPooling", f"psroi_pooling_param {{ spatial_scale: {scale} output_dim: {output_dim} "
                                  f"group_size: {group_size} }}", (2, channels, 9, 10), (7, 5), rois)
    assert_onnx_matches(net, opset)


def dropout_net(params, phase=caffe_pb2.TEST):
    layer = layer_text("Dropout", f"dropout_param {{ {params} }}", name="drop")
    return one_layer_net(layer, {"data": (2, 3, 4)}, 3, phase)


@pytest.mark.parametrize(("params", "op_type"), [
    ("scale_train: true", "Identity"),
    ("scale_train: false", "Mul"),
    ("dropout_ratio: 0.3 scale_train: false", "Mul"),
])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_scale_train_dropout_at_test(params, op_type, opset):
    model = assert_onnx_matches(dropout_net(params), opset)
    assert op_types(model) == [op_type]


def test_scale_train_dropout_in_train_phase_is_refused_naming_the_layer():
    with pytest.raises(OnnxExportError, match=r"layer 'drop' \(Dropout\).*random mask.*TEST phase"):
        onnx_export.to_model(dropout_net("scale_train: false", phase=caffe_pb2.TRAIN))


def test_proposal_is_refused_naming_the_layer():
    anchors = 6
    layer = layer_text("Proposal", "proposal_param { ratio: 0.5 ratio: 1 ratio: 2 scale: 8 scale: 16 }",
                       ("cls", "bbox", "im_info"), ("rois",), "propose")
    inputs = {"cls": (1, 2 * anchors, 4, 5), "bbox": (1, 4 * anchors, 4, 5), "im_info": (1, 3)}
    net = one_layer_net(layer, inputs)
    with pytest.raises(OnnxExportError, match=r"layer 'propose' \(Proposal\).*no exact ONNX equivalent"
                                              r".*ends at its bottoms \(cls, bbox, im_info:"):
        onnx_export.to_model(net)


def test_the_loss_has_no_converter():
    assert sorted(plugin.caffe_onnx_converters()) == ["BoxGroupOutput", "DecodeBBox", "Dropout[scale_train]",
                                                      "PSROIPooling", "Proposal", "ROIAlign", "ROIPooling",
                                                      "ScaleRoute"]


@pytest.mark.parametrize("pad_ratio", [0.2, -0.1])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_roi_pooling_with_cascade_pad_ratio(pad_ratio, opset):
    rois = random_rois(np.random.default_rng(3), 8, 2, 9, 11, 0.5)
    net = roi_net("ROIPooling", f"roi_pooling_param {{ pooled_h: 2 pooled_w: 3 spatial_scale: 0.5 "
                                f"pad_ratio: {pad_ratio} }}", (2, 3, 9, 11), (8, 5), rois)
    assert_onnx_matches(net, opset)


BBOX_REG = ("bbox_reg_param { bbox_mean: 0.1 bbox_mean: -0.1 bbox_mean: 0 bbox_mean: 0.05 bbox_std: 0.1 "
            "bbox_std: 0.1 bbox_std: 0.2 bbox_std: 0.2 }")


def decode_net(phase=caffe_pb2.TEST):
    layer = layer_text("DecodeBBox", BBOX_REG, ("deltas", "rois"), ("boxes",), "decode")
    net = one_layer_net(layer, {"deltas": (7, 8), "rois": (7, 5)}, 4, phase=phase)
    rng = np.random.default_rng(6)
    corners = rng.uniform(0, 60, (7, 2))
    rois = np.concatenate([rng.integers(0, 2, (7, 1)), corners, corners + rng.uniform(1, 40, (7, 2))], axis=1)
    net.blobs[net.blob_names.index("rois")].data[...] = rois
    return net


@pytest.mark.parametrize("opset", [13, NEWEST])
def test_decode_bbox_at_test_is_exact_arithmetic(opset):
    model = assert_onnx_matches(decode_net(), opset)
    assert "Exp" in op_types(model)


def test_decode_bbox_in_train_is_refused_naming_the_layer():
    with pytest.raises(OnnxExportError, match=r"layer 'decode' \(DecodeBBox\).*TRAIN phase.*data-dependent"):
        onnx_export.to_model(decode_net(caffe_pb2.TRAIN))


def test_roi_align_is_refused_saying_how_onnx_roi_align_differs():
    net = roi_net("ROIAlign", "roi_pooling_param { pooled_h: 2 pooled_w: 2 spatial_scale: 0.5 }",
                  (1, 2, 6, 6), (2, 5), [[0, 0, 0, 7, 7], [0, 2, 2, 9, 9]])
    with pytest.raises(OnnxExportError,
                       match=r"layer 'pool' \(ROIAlign\).*bin corner.*ONNX RoiAlign averages"):
        onnx_export.to_model(net)


def test_box_group_output_is_refused_naming_its_bottoms():
    layer = layer_text("BoxGroupOutput", "box_group_output_param { box_group_param { field_w: 8 field_h: 8 "
                                         "stride: 4 } }", ("prob", "bbox"), ("rois",), "proposals")
    net = one_layer_net(layer, {"prob": (1, 2, 3, 3), "bbox": (1, 4, 3, 3)})
    with pytest.raises(OnnxExportError, match=r"layer 'proposals' \(BoxGroupOutput\).*no exact ONNX.*"
                                              r"\(prob, bbox: the objectness"):
        onnx_export.to_model(net)


def test_scale_route_is_refused_naming_the_layer():
    layer = layer_text("ScaleRoute", "scale_route_param { high_scale: 112 }", ("rois",), ("routed",), "route")
    net = one_layer_net(layer, {"rois": (3, 5)})
    rois = [[0, 0, 0, 9, 9], [0, 0, 0, 200, 200], [0, 1, 1, 50, 60]]
    net.blobs[net.blob_names.index("rois")].data[...] = rois
    with pytest.raises(OnnxExportError, match=r"layer 'route' \(ScaleRoute\).*no exact ONNX"):
        onnx_export.to_model(net)
