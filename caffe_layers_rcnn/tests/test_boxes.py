"""py-faster-rcnn's box helpers: bbox_transform_inv, clip_boxes, the size filter, greedy NMS."""

import math

import numpy as np

from caffe_layers_rcnn.boxes import bbox_transform_inv, c_exp, clip_boxes, large_enough, nms, size_mask


def test_bbox_transform_inv_by_hand():
    # Box (0, 0, 9, 19): width 10, height 20, centre (5, 10); move by (0.1, -0.2), widen x2.
    deltas = np.array([[0.1, -0.2, np.log(2), 0.0]], dtype=np.float32)
    boxes = bbox_transform_inv(np.array([[0, 0, 9, 19]], dtype=np.float64), deltas)
    assert boxes.dtype == np.float32
    np.testing.assert_allclose(boxes, [[-4, -4, 16, 16]], atol=1e-5)
    assert bbox_transform_inv(np.zeros((0, 4)), np.zeros((0, 4), dtype=np.float32)).shape == (0, 4)


def test_bbox_transform_inv_takes_the_exp():
    deltas = np.array([[0, 0, 0.5, -0.25]], dtype=np.float32)
    boxes = bbox_transform_inv(np.array([[0, 0, 9, 9]], dtype=np.float32), deltas, exp=c_exp)
    sides = np.float32([math.exp(0.5), math.exp(-0.25)]) * np.float32(10)
    np.testing.assert_array_equal(boxes, [[5 - 0.5 * sides[0], 5 - 0.5 * sides[1],
                                           5 + 0.5 * sides[0], 5 + 0.5 * sides[1]]])
    shifted = bbox_transform_inv(np.array([[0, 0, 9, 9]], dtype=np.float32), deltas, exp=lambda d: d + 1)
    np.testing.assert_array_equal(shifted, [[-2.5, 1.25, 12.5, 8.75]])


def test_c_exp_rounds_the_double_result_once():
    values = np.random.default_rng(0).normal(0, 3, 10_000).astype(np.float32)
    got = c_exp(values)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.float32([math.exp(v) for v in values.tolist()]))


def test_clip_boxes_to_the_image():
    boxes = np.array([[-5, 3, 120, 90], [10, -1, 20, 30]], dtype=np.float32)
    clipped = clip_boxes(boxes, np.float32(80), np.float32(100))
    np.testing.assert_array_equal(clipped, [[0, 3, 99, 79], [10, 0, 20, 30]])


def test_large_enough_counts_the_end_pixel():
    boxes = np.array([[0, 0, 15, 15], [0, 0, 14, 30], [5, 5, 30, 20]], dtype=np.float32)
    np.testing.assert_array_equal(large_enough(boxes, np.float32(16)), [0, 2])
    np.testing.assert_array_equal(size_mask(boxes, np.float32(16)), [True, False, True])


def test_nms_keeps_the_best_and_suppresses_only_above_the_threshold():
    boxes = np.array([[0, 0, 9, 9], [1, 1, 10, 10], [20, 20, 29, 29], [0, 0, 9, 19]], dtype=np.float32)
    scores = np.array([0.9, 0.8, 0.7, 0.6], dtype=np.float32)
    # IoU(0, 1) = 81 / 119 = 0.68; IoU(0, 3) = 100 / 200 = 0.5 exactly, which is kept at threshold 0.5.
    np.testing.assert_array_equal(nms(boxes, scores, 0.7), [0, 1, 2, 3])
    np.testing.assert_array_equal(nms(boxes, scores, 0.6), [0, 2, 3])
    np.testing.assert_array_equal(nms(boxes, scores, 0.5), [0, 2, 3])
    np.testing.assert_array_equal(nms(boxes, scores, 0.4), [0, 2])


def test_nms_orders_by_score_and_stops_at_the_limit():
    boxes = np.array([[0, 0, 5, 5], [10, 10, 15, 15], [20, 20, 25, 25]], dtype=np.float32)
    scores = np.array([0.1, 0.9, 0.5], dtype=np.float32)
    np.testing.assert_array_equal(nms(boxes, scores, 0.7), [1, 2, 0])
    np.testing.assert_array_equal(nms(boxes, scores, 0.7, limit=2), [1, 2])


def test_nms_with_another_overlap_measure_keeps_the_greedy_loop():
    boxes = np.array([[0, 0, 9, 9], [1, 1, 10, 10], [50, 50, 60, 60]], dtype=np.float32)
    scores = np.array([0.9, 0.8, 0.7], dtype=np.float32)
    seen = []

    def measure(first, others):
        seen.append((int(first), others.tolist()))
        return np.where(others == 2, 1.0, 0.0)  # only box 2 "overlaps" whatever is kept

    assert nms(boxes, scores, 0.5, overlap=measure).tolist() == [0, 1]
    assert seen == [(0, [1, 2]), (1, [])]
