"""inisis/caffe's C++ proposal algorithm against a loop-for-loop port of proposal_layer.cpp and nms.cpp."""

import math

import numpy as np
import pytest

from caffe_layers_rcnn.inisis_proposals import (
    inisis_anchors,
    inisis_bottom_problem,
    inisis_iou,
    inisis_nms,
    inisis_propose,
)
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings

f32 = np.float32
PVANET_RATIOS = (0.5, 0.667, 1, 1.5, 2)
PVANET_SCALES = (3, 6, 9, 16, 32)


# ---- The reference: the fork's C++ loops, in float32 scalars ----

def port_anchors(base_size, ratios, scales):
    anchors = []
    base_area = f32(base_size * base_size)
    centre = f32(0.5) * (f32(base_size) - f32(1))
    for ratio in ratios:
        ratio = f32(ratio)
        ratio_w = f32(math.sqrt(base_area / ratio))
        ratio_h = f32(ratio_w * ratio)
        for scale in scales:
            scale = f32(scale)
            # ROUND(x) = (int)(x + 0.5): Python's int() truncates toward zero as C's cast does.
            half_w = f32(0.5) * f32(int(float(ratio_w * scale) * 1.0 / base_size - 1.0 + 0.5))
            half_h = f32(0.5) * f32(int(float(ratio_h * scale) * 1.0 / base_size - 1.0 + 0.5))
            anchors.append([centre - half_w, centre - half_h, centre + half_w, centre + half_h])
    return anchors


def port_transform_box(box, dx, dy, d_log_w, d_log_h, img_w, img_h, min_w, min_h):
    w = box[2] - box[0] + f32(1)
    h = box[3] - box[1] + f32(1)
    ctr_x = box[0] + f32(0.5) * w
    ctr_y = box[1] + f32(0.5) * h
    pred_ctr_x = dx * w + ctr_x
    pred_ctr_y = dy * h + ctr_y
    pred_w = f32(math.exp(d_log_w)) * w
    pred_h = f32(math.exp(d_log_h)) * h
    box = [pred_ctr_x - f32(0.5) * pred_w, pred_ctr_y - f32(0.5) * pred_h,
           pred_ctr_x + f32(0.5) * pred_w, pred_ctr_y + f32(0.5) * pred_h]
    limits = [img_w, img_h, img_w, img_h]
    box = [max(f32(0), min(v, limit - f32(1))) for v, limit in zip(box, limits, strict=True)]
    box_w = box[2] - box[0] + f32(1)
    box_h = box[3] - box[1] + f32(1)
    return box, int(box_w >= min_w) * int(box_h >= min_h)


def port_sort_box(rows, num_top):
    """sort_box: the fork's partial quicksort on the score (an explicit stack instead of recursion)."""
    stack = [(0, len(rows) - 1)]
    while stack:
        start, end = stack.pop()
        pivot = rows[start][4]
        left, right = start + 1, end
        while left <= right:
            while left <= end and rows[left][4] >= pivot:
                left += 1
            while right > start and rows[right][4] <= pivot:
                right -= 1
            if left <= right:
                rows[left], rows[right] = rows[right], rows[left]
                left += 1
                right -= 1
        if right > start:
            rows[start], rows[right] = rows[right], rows[start]
        if start < right - 1:
            stack.append((start, right - 1))
        if right + 1 < num_top and right + 1 < end:
            stack.append((right + 1, end))


def port_iou(a, b):
    if a[0] > b[2] or a[1] > b[3] or a[2] < b[0] or a[3] < b[1]:
        return f32(0)
    width = max(f32(0), min(a[2], b[2]) - max(a[0], b[0]) + f32(1))
    height = max(f32(0), min(a[3], b[3]) - max(a[1], b[1]) + f32(1))
    area = width * height
    area_a = (a[2] - a[0] + f32(1)) * (a[3] - a[1] + f32(1))
    area_b = (b[2] - b[0] + f32(1)) * (b[3] - b[1] + f32(1))
    return area / (area_a + area_b - area)


def port_nms(rows, count, threshold, max_out):
    dead = [False] * count
    out = []
    for i in range(count):
        if dead[i]:
            continue
        out.append(i)
        if len(out) == max_out:
            break
        for j in range(i + 1, count):
            if not dead[j] and port_iou(rows[i], rows[j]) > threshold:
                dead[j] = True
    return out


def port_forward(scores_map, deltas_map, im_info, anchors, s, sort="fork"):
    """Forward_cpu; sort "stable" replaces sort_box by a stable descending sort (ties in given order)."""
    num, _, height, width = scores_map.shape
    num_anchors = len(anchors)
    img_h, img_w = f32(im_info.ravel()[0]), f32(im_info.ravel()[1])
    min_box = f32(s.min_size) * f32(1)
    rois, roi_scores = [], []
    for n in range(num):
        rows = []
        for h in range(height):
            for w in range(width):
                x, y = f32(w * s.feat_stride), f32(h * s.feat_stride)
                for k in range(num_anchors):
                    box = [x + anchors[k][0], y + anchors[k][1], x + anchors[k][2], y + anchors[k][3]]
                    dx, dy, dlw, dlh = (f32(v) for v in deltas_map[n, 4 * k: 4 * k + 4, h, w])
                    box, ok = port_transform_box(box, dx, dy, dlw, dlh, img_w, img_h, min_box, min_box)
                    rows.append([*box, f32(ok) * f32(scores_map[n, num_anchors + k, h, w])])
        if sort == "fork":
            port_sort_box(rows, s.pre_nms_topn)
        else:
            rows.sort(key=lambda row: -row[4])
        for i in port_nms(rows, min(len(rows), s.pre_nms_topn), f32(s.nms_thresh), s.post_nms_topn):
            rois.append([n, *rows[i][:4]])
            roi_scores.append(rows[i][4])
    return np.array(rois, dtype=np.float32).reshape(-1, 5), np.array(roi_scores, dtype=np.float32)


def random_inputs(seed, num, num_anchors, height, width, im_info):
    rng = np.random.default_rng(seed)
    scores = rng.random((num, 2 * num_anchors, height, width)).astype(np.float32)
    deltas = rng.normal(0, 0.3, (num, 4 * num_anchors, height, width)).astype(np.float32)
    return scores, deltas, np.array([im_info], dtype=np.float32)


# ---- Anchors ----

def test_pvanet_anchors_by_hand():
    # base 16, centre 7.5; ratio_w = 16 / sqrt(ratio), ratio_h = 16 sqrt(ratio); side - 1 = ROUND(side *
    # scale / 16 - 1), e.g. ratio 0.5, scale 9: 22.627 * 9 / 16 - 1 = 11.73 -> 12 wide, 5.36 -> 5 high.
    want = [
        [[6, 7, 9, 8], [4, 6, 11, 9], [1.5, 5, 13.5, 10], [-3.5, 2.5, 18.5, 12.5], [-14.5, -3.5, 29.5, 18.5]],
        [[6, 7, 9, 8], [4.5, 5.5, 10.5, 9.5], [2.5, 4.5, 12.5, 10.5], [-2, 1.5, 17, 13.5],
         [-11.5, -5, 26.5, 20]],
        [[6.5, 6.5, 8.5, 8.5], [5, 5, 10, 10], [3.5, 3.5, 11.5, 11.5], [0, 0, 15, 15], [-8, -8, 23, 23]],
        [[7, 6, 8, 9], [5.5, 4.5, 9.5, 10.5], [4.5, 2.5, 10.5, 12.5], [1.5, -2, 13.5, 17],
         [-5, -11.5, 20, 26.5]],
        [[7, 6, 8, 9], [6, 4, 9, 11], [5, 1.5, 10, 13.5], [2.5, -3.5, 12.5, 18.5], [-3.5, -14.5, 18.5, 29.5]],
    ]
    anchors = inisis_anchors(16, PVANET_RATIOS, PVANET_SCALES)
    assert anchors.dtype == np.float32 and anchors.shape == (25, 4)
    np.testing.assert_array_equal(anchors, np.reshape(want, (25, 4)))


def test_anchor_rounding_truncates_and_rounds_halves_up():
    # Scale 0.25: 0.25 - 1 + 0.5 = -0.25 truncates to 0 (a floor would give -1); scale 3.5: 2.5 + 0.5 -> 3
    # (round half to even would give 2); base 10, ratio 4: 5 x 20 before scaling, centre 4.5.
    np.testing.assert_array_equal(inisis_anchors(16, [1], [0.25, 3.5]), [[7.5] * 4, [6, 6, 9, 9]])
    np.testing.assert_array_equal(inisis_anchors(10, [4], [20]), [[0, -15, 9, 24]])


@pytest.mark.parametrize(("base_size", "ratios", "scales"), [
    (16, PVANET_RATIOS, PVANET_SCALES), (16, (0.5, 1, 2), (8, 16, 32)), (7, (0.3, 1.7, 3), (0.5, 2.2, 50)),
])
def test_anchors_match_the_port(base_size, ratios, scales):
    np.testing.assert_array_equal(inisis_anchors(base_size, ratios, scales),
                                  np.array(port_anchors(base_size, ratios, scales), dtype=np.float32))


# ---- IoU and NMS ----

def test_iou_is_zero_for_boxes_apart_and_plus_one_otherwise():
    a = np.array([0, 0, 9, 9], dtype=np.float32)
    others = np.array([[1, 1, 10, 10], [9, 0, 20, 9], [9.5, 0, 20, 9], [0, -5, 9, -0.5]], dtype=np.float32)
    # [9, 20] shares column 9 with a: 1 x 10 of 100 + 120 - 10. The last two start past a's x2 = 9 or end
    # before its y1 = 0: the fork says 0 where py-faster-rcnn's +1 formula would give 0.5 x 10 = 5 pixels.
    got = inisis_iou(a[None, :], others)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, [81 / 119, 10 / 210, 0, 0], rtol=1e-6)
    np.testing.assert_array_equal(inisis_iou(others, a), got)


def test_nms_walks_each_item_and_stops_at_the_limit():
    boxes = np.array([[[0, 0, 9, 9], [1, 1, 10, 10], [20, 20, 29, 29], [0, 0, 9, 19]],
                      [[0, 0, 9, 9], [50, 50, 59, 59], [0, 0, 9, 19], [0, 0, 9, 9]]], dtype=np.float32)
    # Item 0: IoU(0, 1) = 0.68, IoU(0, 3) = 0.5 (kept at 0.5: only "above" suppresses); item 1: box 3 = box 0.
    np.testing.assert_array_equal(inisis_nms(boxes, f32(0.5), 10),
                                  [[True, False, True, True], [True, True, True, False]])
    np.testing.assert_array_equal(inisis_nms(boxes, f32(0.4), 10),
                                  [[True, False, True, False], [True, True, False, False]])
    np.testing.assert_array_equal(inisis_nms(boxes, f32(0.7), 2),
                                  [[True, True, False, False], [True, True, False, False]])
    assert inisis_nms(boxes[:, :0], f32(0.7), 5).shape == (2, 0)


# ---- The whole forward ----

@pytest.mark.parametrize(("num", "base_size", "ratios", "scales", "settings", "im_info", "size"), [
    (2, 16, PVANET_RATIOS, PVANET_SCALES, ProposalSettings(16, 300, 40, 0.7, 16), [90, 110, 1.0], (4, 5)),
    (1, 16, (0.5, 1, 2), (8, 16, 32), ProposalSettings(), [60, 75, 2.0], (4, 5)),
    (2, 8, (1, 2), (4, 10), ProposalSettings(8, 60, 25, 0.4, 6), [50, 40, 0.5], (6, 5)),
    (3, 16, (0.7,), (12, 24), ProposalSettings(16, 20, 8, 0.9, 10), [70, 70, 1.0], (3, 4)),
])
def test_matches_the_port_of_the_fork(num, base_size, ratios, scales, settings, im_info, size):
    anchors = inisis_anchors(base_size, ratios, scales)
    arrays = random_inputs(num + settings.post_nms_topn, num, len(anchors), *size, im_info)
    rois, scores = inisis_propose(*arrays, anchors, settings)
    port = port_anchors(base_size, ratios, scales)
    want_rois, want_scores = port_forward(*arrays, port, settings, sort="stable")
    assert rois.dtype == scores.dtype == np.float32 and scores.ndim == 1
    assert rois.shape[0] > num * 3
    np.testing.assert_array_equal(rois, want_rois)
    np.testing.assert_array_equal(scores, want_scores)
    assert sorted(set(rois[:, 0])) == list(range(num))
    for item in range(num):
        assert (np.diff(scores[rois[:, 0] == item]) <= 0).all()
    # With the fork's own quicksort only the order of tied (zero-scored) boxes may differ; NMS never lets a
    # later box suppress an earlier one, so every box scored above 0 comes out the same.
    fork_rois, fork_scores = port_forward(*arrays, port, settings)
    np.testing.assert_array_equal(rois[scores > 0], fork_rois[fork_scores > 0])
    if (scores > 0).all():
        np.testing.assert_array_equal(rois, fork_rois)


def test_small_boxes_are_kept_with_score_zero_and_im_info_scale_is_ignored():
    # PVANet anchors on a 3 x 3 map, min_size 8: every 3- and 6-pixel anchor (and the boxes the deltas
    # shrink) scores 0; with room for all, the zero-scored boxes come last. Ties at 0 are taken in
    # enumeration order (the fork's quicksort may order them otherwise): the port uses a stable sort too.
    anchors = inisis_anchors(16, PVANET_RATIOS, PVANET_SCALES)
    settings = ProposalSettings(16, 1000, 1000, 0.8, 8)
    scores_map, deltas, info = random_inputs(3, 2, 25, 3, 3, [48, 48, 1.0])
    rois, scores = inisis_propose(scores_map, deltas, info, anchors, settings)
    port = port_anchors(16, PVANET_RATIOS, PVANET_SCALES)
    want_rois, want_scores = port_forward(scores_map, deltas, info, port, settings, sort="stable")
    np.testing.assert_array_equal(rois, want_rois)
    np.testing.assert_array_equal(scores, want_scores)
    small = np.minimum(rois[:, 3] - rois[:, 1], rois[:, 4] - rois[:, 2]) + 1 < 8
    assert small.sum() > 10 and (scores[small] == 0).all() and (scores[~small] > 0).all()
    scaled, _ = inisis_propose(scores_map, deltas, np.array([[48, 48, 7.0]], np.float32), anchors, settings)
    np.testing.assert_array_equal(scaled, rois)


def test_every_item_is_clipped_to_the_first_im_info_row():
    anchors = inisis_anchors(16, (1,), (32,))
    scores = np.ones((2, 2, 2, 2), dtype=np.float32)
    deltas = np.zeros((2, 4, 2, 2), dtype=np.float32)
    info = np.array([[20, 30, 1], [200, 300, 1]], dtype=np.float32)
    rois, _ = inisis_propose(scores, deltas, info, anchors, ProposalSettings(16, 10, 10, 1.0, 1))
    assert rois.shape == (8, 5)
    assert rois[:, [1, 3]].max() == 29 and rois[:, [2, 4]].max() == 19
    np.testing.assert_array_equal(rois[4:, 1:], rois[:4, 1:])


def test_foreground_scores_are_channels_a_to_2a():
    anchors = inisis_anchors(16, (1, 2), (8,))
    scores = np.zeros((1, 4, 1, 3), dtype=np.float32)
    scores[0, :2] = 0.9
    scores[0, 2:] = [[[0.1, 0.2, 0.3]], [[0.6, 0.5, 0.4]]]
    deltas = np.zeros((1, 8, 1, 3), dtype=np.float32)
    rois, kept = inisis_propose(scores, deltas, np.array([[100, 100]], np.float32), anchors,
                                ProposalSettings(16, 6, 6, 1.0, 1))
    np.testing.assert_array_equal(kept, np.float32([0.6, 0.5, 0.4, 0.3, 0.2, 0.1]))
    # Anchor 1 (ratio 2) at cells 0, 1, 2, then anchor 0 at cells 2, 1, 0.
    np.testing.assert_array_equal(rois[:, 1], [5, 21, 37, 36, 20, 4])


def test_pre_nms_topn_cuts_before_nms_and_the_fork_sort_agrees_when_scores_differ():
    anchors = inisis_anchors(16, (0.5, 1, 2), (8, 16))
    settings = ProposalSettings(16, 7, 300, 0.7, 1)
    arrays = random_inputs(11, 1, 6, 3, 3, [60, 60, 1])
    rois, scores = inisis_propose(*arrays, anchors, settings)
    assert len(rois) <= 7
    top7 = np.sort(arrays[0][0, 6:].ravel())[::-1][:7]
    assert set(scores) <= set(top7) and scores[0] == top7[0]
    want, _ = port_forward(*arrays, port_anchors(16, (0.5, 1, 2), (8, 16)), settings)
    np.testing.assert_array_equal(rois, want)


@pytest.mark.parametrize(("shapes", "words"), [
    (((2, 18, 3, 3), (1, 36, 3, 3), 3), "same num"),
    (((2, 12, 3, 3), (2, 36, 3, 3), 3), "2 x 9 anchors = 18 channels"),
    (((2, 18, 3, 3), (2, 36, 3, 4), 3), "height and width"),
    (((2, 18, 3, 3), (2, 36, 3, 3), 1), "at least [height, width]"),
])
def test_bottom_problems(shapes, words):
    assert words in inisis_bottom_problem(*shapes, 9)
    assert inisis_bottom_problem((2, 18, 3, 3), (2, 36, 3, 3), 2, 9) is None
