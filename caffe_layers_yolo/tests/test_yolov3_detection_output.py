"""Yolov3DetectionOutput: boxes derived by hand, the fork's loops on random heads (several heads, images,
anchors, classes), threshold and NMS edges, the -1 rows, refusals, GPU mode."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError

LN3 = math.log(3.0)


def layer_text(bottoms=("h0",), classes=2, mask=(0, 1), scales=(8,), biases=(8, 4, 16, 8), num_box=None,
               confidence=None, nms=None, extra=""):
    fields = [f"num_classes: {classes}", f"mask_group_num: {len(bottoms)}"]
    fields += [f"mask: {m}" for m in mask] + [f"anchors_scale: {s}" for s in scales]
    fields += [f"biases: {b}" for b in biases]
    # num_box: the fork's default is 3; these heads have len(mask) / heads anchors unless a test says so.
    fields.append(f"num_box: {len(mask) // len(bottoms) if num_box is None else num_box}")
    if confidence is not None:
        fields.append(f"confidence_threshold: {confidence}")
    if nms is not None:
        fields.append(f"nms_threshold: {nms}")
    bottom_text = " ".join(f'bottom: "{b}"' for b in bottoms)
    return (f'name: "det" type: "Yolov3DetectionOutput" {bottom_text} top: "det" '
            f'yolov3_detection_output_param {{ {" ".join(fields)} {extra} }}')


def hand_head():
    """One image, a 1 x 2 map (stride 8: input 16 wide, 8 high), 2 anchors (8 x 4 and 16 x 8 px), 2 classes.

    Cell (0, 0): anchor 0 has t = 0, objectness 0.5, class logits (ln 3, -10): class 0 scores 0.5 * 0.75 =
    0.375, box centre (0.25, 0.5), size (8/16, 4/8) = (0.5, 0.5). Anchor 1: t = 0, objectness 0.5, class
    logits (0, 0): both classes 0.25, box centre (0.25, 0.5), size (1, 1). Cell (0, 1): objectness -10.
    """
    x = np.zeros((1, 2, 7, 1, 2), dtype=np.float32)  # (image, anchor, value, row, column)
    x[0, 0, 5, 0, 0], x[0, 0, 6, 0, 0] = LN3, -10
    x[0, :, 4, 0, 1] = -10
    return x.reshape(1, 14, 1, 2)


def test_boxes_by_hand(forward_once):
    # IoU(A, B) = 0.25 / (0.25 + 1 - 0.25) = 0.25 < 0.45: A (0.375) and B's class 0 (0.25) are kept; B's
    # class 1 has the same box (IoU 1) and is suppressed. The tie between B's classes goes to loop order.
    top = forward_once(layer_text(), [hand_head()])
    assert top.shape == (1, 1, 2, 7)
    want = [[0, 1, 0.375, 0.0, 0.25, 0.5, 0.75], [0, 1, 0.25, -0.25, 0.0, 0.75, 1.0]]
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6, atol=1e-7)


def test_threshold_is_strict_and_nms_suppresses_at_equality(forward_once):
    # confidence 0.25 drops B's two 0.25 candidates (score > threshold); nms 0.25 suppresses B (IoU >= 0.25).
    only_a = [[0, 1, 0.375, 0.0, 0.25, 0.5, 0.75]]
    top = forward_once(layer_text(confidence=0.25), [hand_head()])
    np.testing.assert_allclose(top.cpu_data()[0, 0], only_a, rtol=1e-6)
    top = forward_once(layer_text(nms=0.25), [hand_head()])
    np.testing.assert_allclose(top.cpu_data()[0, 0], only_a, rtol=1e-6)


def test_nothing_kept_gives_a_minus_one_row_per_image(forward_once):
    x = np.zeros((3, 14, 1, 2), dtype=np.float32)
    x.reshape(3, 2, 7, 2)[:, :, 4] = -30
    top = forward_once(layer_text(), [x])
    assert top.shape == (1, 1, 3, 7)
    expected = np.full((3, 7), -1, dtype=np.float32)
    expected[:, 0] = [0, 1, 2]
    np.testing.assert_array_equal(top.cpu_data()[0, 0], expected)


def random_heads(seed, num, shapes, classes, boxes, scale=1.5):
    rng = np.random.default_rng(seed)
    heads = [rng.normal(0, scale, (num, boxes * (5 + classes), h, w)).astype(np.float32) for h, w in shapes]
    for head in heads:  # mostly low objectness, as trained nets give, so NMS sees a mix
        head.reshape(num, boxes, 5 + classes, -1)[:, :, 4] -= 2
    return heads


@pytest.mark.parametrize(("num", "confidence", "nms"), [(1, 0.01, 0.45), (2, 0.3, 0.45), (2, 0.05, 0.2),
                                                        (3, 0.5, 0.7)])
def test_matches_the_forks_loops_two_heads(forward_once, fork_yolo, num, confidence, nms):
    # yolov3-tiny-like: heads of stride 32 and 16 on a 96 x 128 input; 3 anchors each, 4 classes.
    biases = (10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319)
    mask, scales = (3, 4, 5, 0, 1, 2), (32, 16)
    heads = random_heads(num, num, [(3, 4), (6, 8)], 4, 3)
    text = layer_text(("a", "b"), 4, mask, scales, biases, confidence=confidence, nms=nms)
    top = forward_once(text, heads)
    want = fork_yolo.v3(heads, 4, biases, mask, scales, 3, confidence, nms)
    assert top.shape == (1, 1, len(want), 7)
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6, atol=1e-7)


def test_matches_the_forks_loops_three_heads_one_box(forward_once, fork_yolo):
    # num_box 1 of mask groups of 2: the fork walks the first num_box anchors of each group.
    biases = (10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119)
    mask, scales = (4, 5, 2, 3, 0, 1), (32, 16, 8)
    heads = random_heads(7, 2, [(2, 2), (4, 4), (8, 8)], 3, 1, scale=2.0)
    text = layer_text(("a", "b", "c"), 3, mask, scales, biases, num_box=1, confidence=0.1)
    top = forward_once(text, heads)
    np.testing.assert_allclose(top.cpu_data()[0, 0], fork_yolo.v3(heads, 3, biases, mask, scales, 1, 0.1),
                               rtol=1e-6, atol=1e-7)


def test_many_candidates_of_one_box(forward_once, fork_yolo):
    # 20 classes, every score above the threshold: 20 candidates per box, all but the best suppressed.
    heads = random_heads(11, 1, [(2, 3)], 20, 2, scale=0.5)
    for head in heads:
        head.reshape(1, 2, 25, -1)[:, :, 4] = 3
    text = layer_text(classes=20, confidence=0.01)
    top = forward_once(text, heads)
    want = fork_yolo.v3(heads, 20, (8, 4, 16, 8), (0, 1), (8,), 2, 0.01, 0.45)
    assert 1 < len(want) <= 12
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6, atol=1e-7)


def test_nms_at_a_threshold_above_one_keeps_repeats(forward_once, fork_yolo):
    # With nms_threshold > 1 no IoU suppresses: every class candidate of a box stays.
    top = forward_once(layer_text(nms=1.5), [hand_head()])
    want = fork_yolo.v3([hand_head()], 2, (8, 4, 16, 8), (0, 1), (8,), 2, 0.01, 1.5)
    assert len(want) == 3
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6)


def test_reshape_sets_one_row_until_forward(make_layer, blob_of):
    layer = make_layer(layer_text())
    bottom, top = [blob_of(hand_head())], [Blob()]
    layer.setup(bottom, top)
    assert top[0].shape == (1, 1, 1, 7)


@pytest.mark.parametrize(("text", "shapes", "message"), [
    (layer_text().replace("num_classes: 2", ""), [(1, 14, 1, 2)], "num_classes must be given"),
    (layer_text(extra="gaussian_box: true"), [(1, 14, 1, 2)], "gaussian_box: true .* not supported"),
    (layer_text(), [(1, 14, 1, 2), (1, 14, 1, 2)], "mask_group_num \\(1\\) must equal the number of bottoms"),
    (layer_text(scales=()), [(1, 14, 1, 2)], "anchors_scale needs one stride per bottom"),
    (layer_text(num_box=3), [(1, 21, 1, 2)], "num_box \\(3\\) must be between 1 and the anchors per head"),
    (layer_text(biases=(8, 4)), [(1, 14, 1, 2)], "mask uses anchor 1, but biases holds 1"),
    (layer_text(), [(1, 12, 1, 2)], "must have num_box x \\(5 \\+ num_classes\\) = 2 x 7 = 14 channels"),
    (layer_text(("a", "b"), mask=(0, 1, 0, 1), scales=(8, 8)), [(1, 14, 1, 2), (2, 14, 1, 2)],
     "same number of images"),
])
def test_refusals_name_the_field(forward_once, text, shapes, message):
    with pytest.raises(LayerSetupError, match=message):
        forward_once(text, [np.zeros(s, dtype=np.float32) for s in shapes])


@pytest.mark.gpu
def test_gpu_mode_reads_the_heads_back_and_matches_cpu(gpu_matches_cpu):
    heads = random_heads(3, 2, [(3, 4), (6, 8)], 4, 3)
    text = layer_text(("a", "b"), 4, (3, 4, 5, 0, 1, 2), (32, 16),
                      (10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319), confidence=0.05)
    gpu_matches_cpu(text, heads, rtol=0, atol=0)
