"""BoxGroupOutput against zhaoweicai/cascade-rcnn's golden case and a loop-for-loop port of Forward_cpu."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import wire_fields

F32 = np.float32
GROUPS = [([8, 16], [8, 10], 4), ([24], [32], 8)]  # (field_w, field_h, stride) per group
REG = ("bbox_reg_param { bbox_mean: 0.01 bbox_mean: -0.02 bbox_mean: 0 bbox_mean: 0.1 bbox_std: 0.1 "
       "bbox_std: 0.1 bbox_std: 0.2 bbox_std: 0.2 }")


def layer_text(fg_thr=0.2, iou_thr=0.45, mode="IOU", max_nms=0, max_post=0, min_size=4, tops=2, groups=GROUPS,
               reg=REG, extra=""):
    group_text = " ".join(
        "box_group_param { " + " ".join([f"field_w: {w}" for w in ws] + [f"field_h: {h}" for h in hs])
        + f" stride: {stride} }}" for ws, hs, stride in groups)
    bottoms = " ".join(f'bottom: "prob{j}" bottom: "bbox{j}"' for j in range(len(groups)))
    top_text = ' top: "rois"' + (' top: "scores"' if tops == 2 else "")
    return (f'name: "proposals" type: "BoxGroupOutput" {bottoms}{top_text} {reg} box_group_output_param {{ '
            f'fg_thr: {fg_thr} iou_thr: {iou_thr} nms_type: "{mode}" max_nms_num: {max_nms} '
            f"max_post_nms_num: {max_post} min_size: {min_size} field_whr: 3 field_xyr: 1.5 {group_text} "
            f"{extra}}}")


def inputs(rng, images, groups=GROUPS, shapes=((5, 7), (3, 4))):
    arrays = []
    for (ws, _, _), (height, width) in zip(groups, shapes, strict=True):
        prob = rng.random((images * len(ws), 2, height, width)).astype(F32)
        prob[:, 1] = 1 - prob[:, 0]
        arrays += [prob, rng.normal(0, 1.5, (images * len(ws), 4, height, width)).astype(F32)]
    return arrays


def overlap(a, b, mode):
    """The fork's JaccardOverlap, scalar by scalar."""
    if a[2] < a[0] or a[3] < a[1] or b[2] < b[0] or b[3] < b[1]:
        return F32(0)
    ix1, iy1, ix2, iy2 = max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])
    inter = F32(0) if ix1 > ix2 or iy1 >= iy2 else (ix2 - ix1 + F32(1)) * (iy2 - iy1 + F32(1))
    size_a = (a[2] - a[0] + F32(1)) * (a[3] - a[1] + F32(1))
    size_b = (b[2] - b[0] + F32(1)) * (b[3] - b[1] + F32(1))
    union = {"IOMU": min(size_a, size_b), "IOFU": size_a}.get(mode, size_a + size_b - inter)
    return F32(0) if union <= 0 else F32(inter / union)


def reference(arrays, fg_thr, iou_thr, mode, max_nms, max_post, min_size, groups=GROUPS):
    """The fork's Forward_cpu, loop for loop (a stable sort where it partial_sorts)."""
    mean = [F32(v) for v in (0.01, -0.02, 0, 0.1)]
    std = [F32(v) for v in (0.1, 0.1, 0.2, 0.2)]
    whr, xyr = F32(3), F32(1.5)
    bounds = [F32(-1) / xyr, F32(1) / xyr, F32(math.log(F32(1) / whr)), F32(math.log(whr))]
    images = arrays[0].shape[0] // len(groups[0][0])
    rows = []
    for n in range(images):
        boxes = []
        for j, (ws, hs, stride) in enumerate(groups):
            prob, bbox = arrays[2 * j], arrays[2 * j + 1]
            _, _, height, width = bbox.shape
            for k in range(len(ws)):
                fw, fh = F32(ws[k]), F32(hs[k])
                for h in range(height):
                    for w in range(width):
                        score = F32(1) - prob[n * len(ws) + k, 0, h, w]
                        if not score >= F32(fg_thr):
                            continue
                        d = [bbox[n * len(ws) + k, c, h, w] * std[c] + mean[c] for c in range(4)]
                        d[:2] = [min(bounds[1], max(bounds[0], v)) for v in d[:2]]
                        d[2:] = [min(bounds[3], max(bounds[2], v)) for v in d[2:]]
                        cx = d[0] * fw + (F32(w) + F32(0.5)) * F32(stride)
                        cy = d[1] * fh + (F32(h) + F32(0.5)) * F32(stride)
                        bw, bh = fw * F32(math.exp(d[2])), fh * F32(math.exp(d[3]))
                        x1, y1 = cx - bw / F32(2), cy - bh / F32(2)
                        box = [max(F32(0), x1), max(F32(0), y1), min(F32(width * stride), x1 + bw - F32(1)),
                               min(F32(height * stride), y1 + bh - F32(1))]
                        if box[2] - box[0] + 1 >= min_size and box[3] - box[1] + 1 >= min_size:
                            boxes.append((box, score))
        if not boxes:
            continue
        boxes.sort(key=lambda b: -b[1])
        if max_nms > 0:
            boxes = boxes[:max_nms]
        kept = [True] * len(boxes)
        for i in range(len(boxes)):
            if not kept[i]:
                continue
            for j in range(i + 1, len(boxes)):
                if kept[j] and overlap(boxes[i][0], boxes[j][0], mode) > F32(iou_thr):
                    kept[j] = False
        survivors = [b for b, keep in zip(boxes, kept, strict=True) if keep]
        if max_post > 0:
            survivors = survivors[:max_post]
        rows += [[n, *box, score] for box, score in survivors]
    if not rows:
        return np.array([[0, 1, 1, 10, 10]], F32), np.zeros((1, 6), F32)
    rows = np.array(rows, dtype=F32)
    return rows[:, :5], rows


def run(make_layer, blob_of, text, arrays, tops=2, phase=caffe_pb2.TEST):
    layer = make_layer(text, phase=phase)
    bottom, top = [blob_of(a) for a in arrays], [Blob() for _ in range(tops)]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, top


def test_golden(golden_case):
    # The fork's CPU forward: batch 2, groups of strides 4 and 8, a binding max_nms_num, both tops.
    assert check_layer_case(golden_case("cascade_box_group_output")) == []


@pytest.mark.parametrize("mode", ["IOU", "IOMU", "IOFU"])
@pytest.mark.parametrize(("max_nms", "max_post", "fg_thr", "min_size"),
                         [(0, 0, 0.2, 4), (30, 0, 0.5, 15), (0, 5, 0.0, 8), (12, 3, 0.3, 4)])
def test_matches_the_forks_loops(make_layer, blob_of, mode, max_nms, max_post, fg_thr, min_size):
    arrays = inputs(np.random.default_rng(5), 3)
    _, top = run(make_layer, blob_of, layer_text(fg_thr, 0.45, mode, max_nms, max_post, min_size), arrays)
    rois, scores = reference(arrays, fg_thr, 0.45, mode, max_nms, max_post, min_size)
    assert top[0].shape == (len(rois), 5, 1, 1) and top[1].shape == (len(rois), 6, 1, 1)
    np.testing.assert_allclose(top[0].cpu_data().reshape(-1, 5), rois, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(top[1].cpu_data().reshape(-1, 6), scores, rtol=1e-5, atol=1e-4)


def test_rows_come_image_by_image_best_first(make_layer, blob_of):
    arrays = inputs(np.random.default_rng(6), 3)
    _, top = run(make_layer, blob_of, layer_text(0.1, 0.5, max_post=4), arrays)
    rows = top[1].cpu_data().reshape(-1, 6)
    images = rows[:, 0]
    assert list(images) == sorted(images) and set(images) == {0, 1, 2}
    for n in range(3):
        assert np.count_nonzero(images == n) <= 4
        assert np.all(np.diff(rows[images == n, 5]) <= 0)


def test_no_box_gives_the_forks_placeholder_rows(make_layer, blob_of):
    # fg_thr above 1: no score passes; the fork outputs one roi [0, 1, 1, 10, 10] and a row of zeros.
    _, top = run(make_layer, blob_of, layer_text(fg_thr=1.5), inputs(np.random.default_rng(7), 2))
    assert top[0].cpu_data().reshape(-1).tolist() == [0, 1, 1, 10, 10]
    assert top[1].shape == (1, 6, 1, 1) and not top[1].cpu_data().any()


def test_one_top_gives_rois_only(make_layer, blob_of):
    arrays = inputs(np.random.default_rng(8), 2)
    _, top = run(make_layer, blob_of, layer_text(tops=1), arrays, tops=1)
    rois, _ = reference(arrays, 0.2, 0.45, "IOU", 0, 0, 4)
    np.testing.assert_allclose(top[0].cpu_data().reshape(-1, 5), rois, rtol=1e-5, atol=1e-4)


def test_hand_example_decode_clamp_and_clip(make_layer, blob_of):
    # One image, one 16 x 8 (w x h) anchor at stride 4 on a 1 x 2 map, no regression std/mean (0 / 1).
    prob = np.array([[[[0.1, 0.8]], [[0.9, 0.2]]]], dtype=F32)  # scores 0.9 and 0.2
    deltas = np.zeros((1, 4, 1, 2), dtype=F32)
    deltas[0, :, 0, 1] = [5, 0, 5, -5]  # clamped to dx 1/2, dw log 2, dh log(1/2)
    text = ('name: "p" type: "BoxGroupOutput" bottom: "prob" bottom: "bbox" top: "rois" top: "scores" '
            'box_group_output_param { min_size: 1 iou_thr: 0.99 box_group_param { field_w: 16 field_h: 8 '
            'stride: 4 } }')
    _, top = run(make_layer, blob_of, text, [prob, deltas])
    rows = top[1].cpu_data().reshape(-1, 6)
    # Pixel 0: centre (2, 2), box 16 x 8 -> (-6, -2, 9, 5), clipped to x1, y1 >= 0 (x2 <= 8, y2 <= 4).
    # Pixel 1: centre (6 + 8, 2), 32 x 4 -> (-2, 0, 29, 3), clipped to (0, 0, 8, 3): the map is 2 x 4 = 8
    # pixels wide and the fork clips x2 to 8, not 7. Their IoU, 36 / 45 = 0.8, is under iou_thr.
    np.testing.assert_allclose(rows, [[0, 0, 0, 8, 4, 0.9], [0, 0, 0, 8, 3, 0.2]], rtol=1e-6)


@pytest.mark.parametrize(("text", "words"), [
    (layer_text(groups=[([8], [8, 8], 4)]), r"box_group_param\[0\] has 2 field_h and 1 field_w"),
    (layer_text(groups=[([], [], 4)]), r"box_group_param\[0\] has no field_h"),
    (layer_text(groups=[([8], [8], 0)]), r"box_group_param\[0\]\.stride must be > 0"),
    (layer_text(mode="IOUX"), r"nms_type must be one of IOU, IOMU, IOFU, got 'IOUX'"),
    (layer_text(reg="bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 }"),
     r"bbox_reg_param gives bbox_mean but no bbox_std"),
    (layer_text(reg="bbox_reg_param { bbox_mean: 0 bbox_std: 1 }"), r"needs 4 bbox_mean and 4 bbox_std"),
    (layer_text(reg="bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_std: 1 "
                    "bbox_std: 1 bbox_std: 0 bbox_std: 1 }"), r"bbox_std values must be > 0"),
])
def test_bad_parameters_are_refused_naming_the_field(make_layer, blob_of, text, words):
    arrays = inputs(np.random.default_rng(9), 1, groups=[([8], [8], 4)], shapes=[(3, 3)])
    arrays = arrays + arrays if "bottom: \"prob1\"" in text else arrays
    with pytest.raises(LayerSetupError, match=r"proposals.*BoxGroupOutput.*" + words):
        run(make_layer, blob_of, text, arrays)


def test_bottom_pairs_must_match_the_groups(make_layer, blob_of):
    arrays = inputs(np.random.default_rng(10), 1)
    with pytest.raises(LayerSetupError, match=r"one \(prob, bbox\) pair of bottoms per box_group_param: 2 "
                                              r"groups need 4 bottoms, got 2"):
        run(make_layer, blob_of, layer_text().replace(' bottom: "prob1" bottom: "bbox1"', ""), arrays[:2])


def test_rows_must_be_images_times_anchors(make_layer, blob_of):
    arrays = inputs(np.random.default_rng(10), 2)
    arrays[2], arrays[3] = arrays[2][:1], arrays[3][:1]  # group 1 (one anchor): 1 row, group 0 says 2 images
    with pytest.raises(LayerSetupError, match=r"bottoms 2 and 3 \(group 1, 1 anchors\): both must have "
                                              r"images x anchors = 2 x 1 rows"):
        run(make_layer, blob_of, layer_text(), arrays)


def test_bbox_bottom_needs_4_channels(make_layer, blob_of):
    arrays = inputs(np.random.default_rng(10), 1)
    arrays[1] = arrays[1][:, :3]
    with pytest.raises(LayerSetupError, match=r"bbox bottom must be \(rows, 4, H, W\)"):
        run(make_layer, blob_of, layer_text(), arrays)


def test_blocks_are_at_the_forks_numbers():
    param = parse_text(layer_text(), caffe_pb2.LayerParameter())
    fields = wire_fields(param.SerializeToString())
    assert 158 in fields and 150 in fields
    assert set(wire_fields(fields[158][0])) == {1, 2, 3, 4, 5, 6, 7, 8, 9}
    assert set(wire_fields(fields[150][0])) == {1, 2}
