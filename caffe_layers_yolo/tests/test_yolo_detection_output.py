"""YoloDetectionOutput (YOLOv2): boxes derived by hand, the fork's loops on random heads (one and two bottoms,
several images), the >= threshold, the -1 rows, refusals, GPU mode."""

import logging
import math

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_layers_yolo.yolo_detection_output import softmax_best

VOC_BIASES = (1.08, 1.19, 3.42, 4.41, 6.63, 11.38, 9.42, 5.11, 16.62, 10.52)


def layer_text(bottoms=("h0",), classes=2, num_box=2, biases=(0.5, 0.5, 1, 1), confidence=None, nms=None,
               extra=""):
    fields = [f"num_classes: {classes}", f"num_box: {num_box}"] + [f"biases: {b}" for b in biases]
    if confidence is not None:
        fields.append(f"confidence_threshold: {confidence}")
    if nms is not None:
        fields.append(f"nms_threshold: {nms}")
    bottom_text = " ".join(f'bottom: "{b}"' for b in bottoms)
    return (f'name: "det" type: "YoloDetectionOutput" {bottom_text} top: "det" '
            f'yolo_detection_output_param {{ {" ".join(fields)} {extra} }}')


def hand_head():
    """One 1 x 1 cell, 2 anchors (0.5 and 1 cell wide), 2 classes, all t = 0 (centre 0.5, objectness 0.5).

    Anchor 0: class logits (ln 3, 0): softmax (0.75, 0.25), class 0, confidence 0.375, box 0.5 x 0.5.
    Anchor 1: class logits (0, ln 2): softmax (1/3, 2/3), class 1, confidence 1/3, box 1 x 1.
    """
    x = np.zeros((1, 2, 7), dtype=np.float32)
    x[0, 0, 5] = math.log(3.0)
    x[0, 1, 6] = math.log(2.0)
    return x.reshape(1, 14, 1, 1)


def test_boxes_by_hand(forward_once):
    # IoU = 0.25 / (0.25 + 1 - 0.25) = 0.25 < 0.45: both kept, best confidence first, label = class + 1.
    top = forward_once(layer_text(), [hand_head()])
    np.testing.assert_allclose(top.cpu_data()[0, 0], [[0, 1, 0.375, 0.25, 0.25, 0.75, 0.75],
                                                      [0, 2, 1 / 3, 0.0, 0.0, 1.0, 1.0]], rtol=1e-6)


def test_threshold_keeps_equality_and_nms_suppresses_at_equality(forward_once):
    # YOLOv2 keeps confidence >= threshold (v3: >): at 0.375 anchor 0 stays. nms 0.25 suppresses anchor 1.
    top = forward_once(layer_text(confidence=0.375), [hand_head()])
    np.testing.assert_allclose(top.cpu_data()[0, 0], [[0, 1, 0.375, 0.25, 0.25, 0.75, 0.75]], rtol=1e-6)
    top = forward_once(layer_text(nms=0.25), [hand_head()])
    assert top.shape == (1, 1, 1, 7)


def test_softmax_takes_the_first_best_class():
    best, probability = softmax_best(np.array([[1.0, 3.0, 3.0, 0.0]], dtype=np.float32))
    assert best[0] == 1
    assert probability[0] == pytest.approx(math.exp(3) / (math.exp(1) + 2 * math.exp(3) + 1), rel=1e-6)


def test_nothing_kept_gives_a_minus_one_row_per_image(forward_once):
    x = np.zeros((2, 14, 3, 3), dtype=np.float32)
    x.reshape(2, 2, 7, 9)[:, :, 4] = -30
    top = forward_once(layer_text(), [x])
    np.testing.assert_array_equal(top.cpu_data()[0, 0], [[0] + [-1] * 6, [1] + [-1] * 6])


def random_head(seed, num, side, classes=20, boxes=5):
    rng = np.random.default_rng(seed)
    head = rng.normal(0, 1.5, (num, boxes * (5 + classes), side, side)).astype(np.float32)
    head.reshape(num, boxes, 5 + classes, -1)[:, :, 4] -= 1
    return head


@pytest.mark.parametrize(("num", "confidence", "nms"), [(1, 0.01, 0.45), (2, 0.3, 0.45), (3, 0.05, 0.3)])
def test_matches_the_forks_loops(forward_once, fork_yolo, num, confidence, nms):
    head = random_head(num, num, 4)
    top = forward_once(layer_text(classes=20, num_box=5, biases=VOC_BIASES, confidence=confidence,
                                              nms=nms), [head])
    want = fork_yolo.v2([head], 20, VOC_BIASES, 5, confidence, nms)
    assert top.shape == (1, 1, len(want), 7)
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6, atol=1e-7)


def test_second_bottom_is_a_second_scale(forward_once, fork_yolo):
    # mobilenet_yolo_deploy's two heads: candidates of bottom 1 follow all of bottom 0's before the sort.
    heads = [random_head(5, 2, 3, classes=4), random_head(6, 2, 6, classes=4)]
    text = layer_text(("a", "b"), classes=4, num_box=5, biases=VOC_BIASES, confidence=0.2)
    top = forward_once(text, heads)
    np.testing.assert_allclose(top.cpu_data()[0, 0], fork_yolo.v2(heads, 4, VOC_BIASES, 5, 0.2), rtol=1e-6,
                               atol=1e-7)


def test_bottoms_after_the_second_are_ignored(forward_once, fork_yolo, caplog):
    heads = [random_head(5, 1, 3, classes=4), random_head(6, 1, 2, classes=4), np.zeros((1, 3))]
    text = layer_text(("a", "b", "c"), classes=4, num_box=5, biases=VOC_BIASES, confidence=0.2)
    with caplog.at_level(logging.WARNING, logger="caffe.yolo"):
        top = forward_once(text, heads)
    assert "bottoms ['c'] are ignored" in caplog.text
    want = fork_yolo.v2(heads[:2], 4, VOC_BIASES, 5, 0.2)
    np.testing.assert_allclose(top.cpu_data()[0, 0], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize(("text", "shape", "message"), [
    (layer_text().replace("num_classes: 2", ""), (1, 14, 1, 1), "num_classes must be given"),
    (layer_text(biases=(1, 1)), (1, 14, 1, 1), "biases needs a \\(w, h\\) pair per box: 4 values"),
    (layer_text(num_box=0), (1, 14, 1, 1), "num_box must be positive"),
    (layer_text(), (1, 15, 1, 1), "2 x 7 = 14 channels"),
    (layer_text(), (1, 14, 2, 3), "must be square"),
])
def test_refusals_name_the_field(forward_once, text, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        forward_once(text, [np.zeros(shape, dtype=np.float32)])


@pytest.mark.gpu
def test_gpu_mode_matches_cpu(gpu_matches_cpu):
    heads = [random_head(8, 2, 3, classes=4), random_head(9, 2, 5, classes=4)]
    gpu_matches_cpu(layer_text(("a", "b"), classes=4, num_box=5, biases=VOC_BIASES, confidence=0.1), heads,
                    rtol=0, atol=0)
