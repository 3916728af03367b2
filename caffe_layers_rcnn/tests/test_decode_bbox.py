"""DecodeBBox against zhaoweicai/cascade-rcnn's golden case, hand-derived boxes and its TRAIN screening."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import wire_fields

REG = ("bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_std: 0.1 bbox_std: 0.1 "
       "bbox_std: 0.2 bbox_std: 0.2 }")


def layer_text(reg="", extra="", bottoms=2):
    names = ' bottom: "pred" bottom: "rois"' + (' bottom: "gt"' if bottoms == 3 else "")
    return f'name: "decode" type: "DecodeBBox"{names} top: "boxes" {reg} {extra}'


def run(make_layer, blob_of, text, arrays, phase=caffe_pb2.TEST):
    layer = make_layer(text, phase=phase)
    bottom, top = [blob_of(a) for a in arrays], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return top[0]


def test_golden(golden_case):
    # The fork's CPU forward at TEST: 7 rois, the first cascade stage's stds.
    assert check_layer_case(golden_case("cascade_decode_bbox")) == []


def test_hand_example(make_layer, blob_of):
    # roi (0, 0)-(9, 9): width 10, centre 4.5. Only columns 4..7 count (the first group is garbage here).
    pred = np.array([[9, 9, 9, 9, 0, 0, 0, 0], [9, 9, 9, 9, 0.1, -0.2, math.log(2), 0]], dtype=np.float32)
    rois = np.array([[1, 0, 0, 9, 9], [0, 0, 0, 9, 9]], dtype=np.float32)
    top = run(make_layer, blob_of, layer_text(), [pred, rois])
    assert top.shape == (2, 5, 1, 1)
    # Row 2: centre (4.5 + 1, 4.5 - 2), width 20, height 10: x1 = 5.5 - 9.5, y1 = 2.5 - 4.5, x2 = x1 + 19.
    np.testing.assert_allclose(top.cpu_data().reshape(2, 5), [[1, 0, 0, 9, 9], [0, -4, -2, 15, 7]], atol=1e-5)


def test_stds_and_means_scale_the_deltas(make_layer, blob_of):
    reg = ("bbox_reg_param { bbox_mean: 1 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_std: 0.5 bbox_std: 1 "
           "bbox_std: 1 bbox_std: 1 }")
    pred = np.array([[0, 0, 0, 0, 2, 0, 0, 0]], dtype=np.float32)  # dx = 2 * 0.5 + 1 = 2 widths
    top = run(make_layer, blob_of, layer_text(reg), [pred, np.array([[0, 10, 10, 13, 13]], np.float32)])
    np.testing.assert_allclose(top.cpu_data().reshape(5), [0, 18, 10, 21, 13])


def test_test_phase_keeps_inverted_boxes(make_layer, blob_of):
    rois = np.array([[0, 5, 5, 1, 1], [0, 0, 0, 3, 3]], dtype=np.float32)
    top = run(make_layer, blob_of, layer_text(), [np.zeros((2, 8), np.float32), rois])
    np.testing.assert_allclose(top.cpu_data().reshape(2, 5), rois)


def test_train_phase_drops_inverted_boxes_and_matched_ground_truth(make_layer, blob_of):
    rois = np.array([[0, 5, 5, 1, 1], [0, 0, 0, 3, 3], [1, 2, 2, 8, 8], [1, 0, 0, 1, 1]], dtype=np.float32)
    gt = np.zeros((4, 6), dtype=np.float32)
    gt[:, -1] = [0.1, 0.2, 0.95, 0.94]  # >= gt_iou_thr (0.95 by default) drops the third
    top = run(make_layer, blob_of, layer_text(bottoms=3), [np.zeros((4, 8), np.float32), rois, gt],
              caffe_pb2.TRAIN)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 5), rois[[1, 3]])
    top = run(make_layer, blob_of, layer_text(extra="decode_bbox_param { gt_iou_thr: 0.5 }", bottoms=3),
              [np.zeros((4, 8), np.float32), rois, gt], caffe_pb2.TRAIN)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 5), rois[[1]])
    top = run(make_layer, blob_of, layer_text(), [np.zeros((4, 8), np.float32), rois], caffe_pb2.TRAIN)
    assert top.shape == (3, 5, 1, 1)


def test_train_phase_with_nothing_left_is_an_error(make_layer, blob_of):
    with pytest.raises(ValueError, match=r"decode.*DecodeBBox.*every box was screened out"):
        run(make_layer, blob_of, layer_text(), [np.zeros((1, 8), np.float32), [[0, 5, 5, 1, 1]]],
            caffe_pb2.TRAIN)


@pytest.mark.parametrize(("text", "arrays", "phase", "words"), [
    (layer_text(bottoms=3), [(2, 8), (2, 5), (2, 6)], caffe_pb2.TEST, "third bottom .* TRAIN phase only"),
    (layer_text(), [(2, 4), (2, 5)], caffe_pb2.TEST, r"bottom 0 \(bbox_pred\) must be \(2, 8\)"),
    (layer_text(), [(2, 8), (3, 5)], caffe_pb2.TEST, r"bottom 1 \(rois\) must be \(2, 5\)"),
    (layer_text(bottoms=3), [(2, 8), (2, 5), (3, 6)], caffe_pb2.TRAIN, r"bottom 2 .* must have 2 rows"),
    (layer_text("bbox_reg_param { bbox_std: 1 bbox_std: 1 bbox_std: 1 bbox_std: 1 }"), [(2, 8), (2, 5)],
     caffe_pb2.TEST, "gives bbox_std but no bbox_mean"),
])
def test_bad_input_is_refused_naming_the_layer(make_layer, blob_of, text, arrays, phase, words):
    with pytest.raises(LayerSetupError, match=r"decode.*DecodeBBox.*" + words):
        run(make_layer, blob_of, text, [np.zeros(shape, np.float32) for shape in arrays], phase)


def test_blocks_are_at_the_forks_numbers():
    param = parse_text(layer_text(REG, "decode_bbox_param { gt_iou_thr: 0.9 }"), caffe_pb2.LayerParameter())
    fields = wire_fields(param.SerializeToString())
    assert 150 in fields and 155 in fields
