"""cascade-rcnn's bbox_util arithmetic: its asymmetric overlap and modes, grouped NMS, bbox_reg_param."""

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_layers_rcnn.cascade_boxes import box_sizes, fork_overlaps, grouped_nms, rank_within, read_bbox_reg
from caffe_layers_rcnn.params import BBoxRegParameter


def overlaps(boxes, mode="IOU"):
    boxes = np.asarray(boxes, dtype=np.float32)
    return fork_overlaps(boxes, box_sizes(np, boxes), 0, np.arange(1, len(boxes)), mode).tolist()


def test_box_sizes_use_plus_one_and_zero_inverted_boxes():
    boxes = np.array([[0, 0, 9, 4], [5, 5, 4, 9], [2, 2, 2, 2]], np.float32)
    assert box_sizes(np, boxes).tolist() == [50, 0, 1]


def test_overlap_modes():
    # (0, 0)-(9, 9) (100) against (5, 0)-(14, 9) (100): intersection 5 x 10 = 50.
    pair = [[0, 0, 9, 9], [5, 0, 14, 9]]
    assert overlaps(pair) == [pytest.approx(50 / 150)]
    assert overlaps(pair, "IOMU") == [0.5]
    # IOFU divides by the first box: (0, 0)-(4, 9) (50) inside (0, 0)-(9, 9).
    assert overlaps([[0, 0, 4, 9], [0, 0, 9, 9]], "IOFU") == [1.0]
    assert overlaps([[0, 0, 9, 9], [0, 0, 4, 9]], "IOFU") == [0.5]


def test_overlap_is_asymmetric_in_x_and_y():
    # Touching in one column (ix1 == ix2): an intersection of width 1. Touching in one row (iy1 == iy2): none.
    assert overlaps([[0, 0, 4, 4], [4, 0, 8, 4]]) == [pytest.approx(5 / 45)]
    assert overlaps([[0, 0, 4, 4], [0, 4, 4, 8]]) == [0.0]


def test_inverted_boxes_overlap_nothing():
    assert overlaps([[0, 0, 9, 9], [9, 9, 0, 0], [0, 0, 9, 9]]) == [0.0, 1.0]
    assert overlaps([[9, 9, 0, 0], [0, 0, 9, 9]]) == [0.0]


def test_grouped_nms_suppresses_within_groups_only_in_the_given_order():
    boxes = np.array([[0, 0, 9, 9], [0, 0, 9, 8], [0, 0, 9, 9], [20, 20, 29, 29], [0, 0, 9, 7]], np.float32)
    groups = np.array([0, 0, 1, 1, 1])
    # Box 1 overlaps box 0 (0.9); box 2 is box 0's copy in another group; box 4 overlaps box 2 (0.8).
    assert grouped_nms(boxes, groups, np.float32(0.85), "IOU").tolist() == [0, 2, 3, 4]
    assert grouped_nms(boxes, groups, np.float32(0.75), "IOU").tolist() == [0, 2, 3]
    # Suppression needs overlap ABOVE the threshold.
    assert grouped_nms(boxes[:2], groups[:2], np.float32(0.9), "IOU").tolist() == [0, 1]


def test_rank_within():
    assert rank_within(np.array([0, 0, 0, 2, 2, 5])).tolist() == [0, 1, 2, 0, 1, 0]
    assert rank_within(np.array([], dtype=np.int64)).tolist() == []


def error(message):
    return LayerSetupError(message)


def test_read_bbox_reg():
    default = read_bbox_reg(BBoxRegParameter(), error)
    assert default.mean.tolist() == [0, 0, 0, 0] and default.std.tolist() == [1, 1, 1, 1]
    given = read_bbox_reg(BBoxRegParameter(bbox_mean=[0, 0, 0.5, 0], bbox_std=[0.1, 0.1, 0.2, 0.2]), error)
    assert given.std.dtype == np.float32 and given.mean.tolist() == [0, 0, 0.5, 0]
    with pytest.raises(LayerSetupError, match="needs 4 bbox_mean and 4 bbox_std values"):
        read_bbox_reg(BBoxRegParameter(bbox_mean=[0] * 4, bbox_std=[1] * 3), error)
    with pytest.raises(LayerSetupError, match="gives bbox_mean but no bbox_std"):
        read_bbox_reg(BBoxRegParameter(bbox_mean=[0] * 4), error)
