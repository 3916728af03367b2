"""DetectionEvaluate (inisis): the fork's hand-computed cases, placeholder rows of DetectionOutput (label -1,
evaluated like any label) and item -1 rows (skipped, zero rows), ground truth ending at the first item -1,
pixel boxes from name_size_file (scaled without clipping, consumed image by image across forwards), the
extra resize policy, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError

GT = [[0, 1, 0, .1, .1, .3, .3, 0], [0, 1, 0, .6, .6, .8, .8, 1], [1, 2, 0, .3, .3, .6, .5, 0],
      [1, 1, 0, .7, .1, .9, .3, 0]]
DETECTIONS = [[0, 1, .3, .1, 0, .4, .3], [0, 1, .7, 0, .1, .2, .3], [0, 1, .9, .7, .6, .8, .8],
              [1, 2, .8, .2, .1, .4, .4], [1, 2, .1, .4, .3, .7, .5], [1, 1, .2, .8, .1, 1, .3],
              [1, 3, .2, .8, .1, 1, .3], [2, 1, .2, .8, .1, 1, .3]]


def eval_text(params):
    return f"name: 'eval' type: 'DetectionEvaluate' detection_evaluate_param {{ {params} }}"


def blobs(detections, gt):
    det = Blob((1, 1, len(detections), 7))
    det.mutable_cpu_data()[...] = np.reshape(detections, det.shape)
    truth = Blob((1, 1, len(gt), 8))
    truth.mutable_cpu_data()[...] = np.reshape(gt, truth.shape)
    return [det, truth]


def evaluate(make_layer, params, detections=DETECTIONS, gt=GT, layer=None):
    """The top rows after one forward (of a new layer, or of a layer already set up)."""
    bottom, top = blobs(detections, gt), [Blob()]
    if layer is None:
        layer = make_layer(eval_text(params))
        layer.setup(bottom, top)
    layer.forward(bottom, top)
    return top[0].cpu_data().reshape(-1, 5), layer


def rows(text):
    return [[float(v) for v in line.split()] for line in text.strip().splitlines()]


def test_forks_hand_computed_case(make_layer):
    out, _ = evaluate(make_layer, "num_classes: 3 background_label_id: 0 overlap_threshold: 0.3")
    np.testing.assert_allclose(out, rows("""
        -1 1 3 -1 -1
        -1 2 1 -1 -1
        0 1 0.9 1 0
        0 1 0.7 1 0
        0 1 0.3 0 1
        1 1 0.2 1 0
        1 2 0.8 0 1
        1 2 0.1 1 0
        1 3 0.2 0 1
        2 1 0.2 0 1"""), rtol=1e-6)


def test_forks_case_skipping_difficult_ground_truth(make_layer):
    """A detection on a difficult box is neither true nor false positive; difficult boxes are not counted."""
    out, _ = evaluate(make_layer, "num_classes: 3 overlap_threshold: 0.3 evaluate_difficult_gt: false")
    np.testing.assert_allclose(out[[0, 2, 3]], rows("""
        -1 1 2 -1 -1
        0 1 0.9 0 0
        0 1 0.7 1 0"""), rtol=1e-6)


def test_second_detection_of_a_box_is_a_false_positive_and_order_is_by_score(make_layer):
    detections = [[0, 1, 0.4, .1, .1, .3, .3], [0, 1, 0.8, .1, .1, .3, .31], [0, 1, 0.6, .6, .6, .8, .8]]
    out, _ = evaluate(make_layer, "num_classes: 2", detections, GT[:2])
    np.testing.assert_allclose(out, rows("""
        -1 1 2 -1 -1
        0 1 0.8 1 0
        0 1 0.6 1 0
        0 1 0.4 0 1"""), rtol=1e-6)


def test_groups_without_ground_truth_keep_their_input_order(make_layer):
    detections = [[5, 1, 0.2, 0, 0, 1, 1], [5, 1, 0.9, 0, 0, 1, 1], [0, 2, 0.1, 0, 0, 1, 1],
                  [0, 2, 0.7, 0, 0, 1, 1]]
    out, _ = evaluate(make_layer, "num_classes: 3", detections, GT[:2])
    np.testing.assert_allclose(out[2:], rows("""
        0 2 0.1 0 1
        0 2 0.7 0 1
        5 1 0.2 0 1
        5 1 0.9 0 1"""), rtol=1e-6)


def test_placeholder_rows_and_unlisted_items(make_layer):
    """The top has a row per detection row. A label -1 row (DetectionOutput found nothing) is evaluated like
    any label: image 0 has no ground truth of label -1, so it is a false positive of score -1, listed first
    (labels ascending). Item -1 rows are skipped: their rows at the end stay zero."""
    detections = [[1, 1, 0.5, .7, .1, .9, .3], [-1, 1, 0.5, 0, 0, 1, 1], [0, -1, -1, -1, -1, -1, -1],
                  [-1, -1, -1, -1, -1, -1, -1]]
    out, _ = evaluate(make_layer, "num_classes: 2", detections, GT)
    np.testing.assert_allclose(out, rows("""
        -1 1 3 -1 -1
        0 -1 -1 0 1
        1 1 0.5 1 0
        0 0 0 0 0
        0 0 0 0 0"""), rtol=1e-6)


def test_label_minus_one_rows_of_an_image_without_ground_truth(make_layer):
    """Image 7 has no ground truth: its placeholder row and its detection are false positives (-1 first)."""
    detections = [[7, 1, 0.4, 0, 0, 1, 1], [7, -1, -1, -1, -1, -1, -1]]
    out, _ = evaluate(make_layer, "num_classes: 2", detections, GT)
    np.testing.assert_allclose(out, rows("""
        -1 1 3 -1 -1
        7 -1 -1 0 1
        7 1 0.4 0 1"""), rtol=1e-6)


def test_label_minus_one_rows_count_in_the_name_size_file(make_layer, tmp_path):
    """An image whose only row is a placeholder still takes its name_size_file entry: the next forward's image
    0 gets the second entry, 1000 x 1000, where the pixel IoU 10201 / 20301 fails the 0.6 threshold (on the
    first, 10 x 10, 4 / 6 would pass)."""
    sizes = tmp_path / "name_size.txt"
    sizes.write_text("a 10 10\nb 1000 1000\n")
    out, layer = evaluate(make_layer, f"num_classes: 2 overlap_threshold: 0.6 name_size_file: '{sizes}'",
                          [[3, -1, -1, -1, -1, -1, -1]], GT)
    assert out[1].tolist() == [3, -1, -1, 0, 1]
    out, _ = evaluate(make_layer, "", [[0, 1, 0.9, 0, 0, 0.1, 0.1]], [[0, 1, 0, 0, 0, 0.1, 0.2, 0]],
                      layer=layer)
    assert out[1, 3:].tolist() == [0, 1]


def test_ground_truth_ends_at_the_first_item_minus_one(make_layer):
    gt = GT[:1] + [[-1, 0, 0, 0, 0, 0, 0, 0]] + GT[1:]
    out, _ = evaluate(make_layer, "num_classes: 3", DETECTIONS[:1], gt)
    np.testing.assert_allclose(out[:2, 2], [1, 0])


def test_no_background(make_layer):
    out, _ = evaluate(make_layer, "num_classes: 3 background_label_id: 4294967295", DETECTIONS[:2], GT)
    assert out.shape == (3 + 2, 5)
    np.testing.assert_allclose(out[:3, :3], [[-1, 0, 0], [-1, 1, 3], [-1, 2, 1]])


def test_name_size_file_scales_boxes_image_by_image(make_layer, tmp_path):
    """Normalised IoU 0.5; on a 10 x 10 image pixel IoU is 4 / 6, on 1000 x 1000 it is 10201 / 20301."""
    sizes = tmp_path / "name_size.txt"
    sizes.write_text("small 10 10\nlarge 1000 1000\n")
    detections = [[0, 1, 0.9, 0, 0, 0.1, 0.1]]
    gt = [[0, 1, 0, 0, 0, 0.1, 0.2, 0]]
    normalised, _ = evaluate(make_layer, "num_classes: 2 overlap_threshold: 0.6", detections, gt)
    assert normalised[1, 3:].tolist() == [0, 1]
    out, layer = evaluate(make_layer, f"num_classes: 2 overlap_threshold: 0.6 name_size_file: '{sizes}'",
                          detections, gt)
    verdicts = [out[1, 3:].tolist()]
    for _ in range(2):
        out, layer = evaluate(make_layer, "", detections, gt, layer=layer)
        verdicts.append(out[1, 3:].tolist())
    assert verdicts == [[1, 0], [0, 1], [1, 0]]


def test_name_size_file_scales_without_clipping(make_layer, tmp_path):
    """inisis scales boxes to pixels unclipped: on 10 x 10, [-2, 0, 2, 2] against [0, 0, 2, 2] has IoU
    9 / (15 + 9 - 9) = 0.6 < 0.7. The ssd branch's OutputBBox (here: the extra resize_param, WARP) clips
    first: [0, 0, 2, 2], IoU 1."""
    sizes = tmp_path / "name_size.txt"
    sizes.write_text("img 10 10\n")
    detections = [[0, 1, 0.9, -0.2, 0, 0.2, 0.2]]
    gt = [[0, 1, 0, 0, 0, 0.2, 0.2, 0]]
    common = f"num_classes: 2 name_size_file: '{sizes}' "
    out, _ = evaluate(make_layer, common + "overlap_threshold: 0.7", detections, gt)
    assert out[1, 3:].tolist() == [0, 1]
    out, _ = evaluate(make_layer, common + "overlap_threshold: 0.59", detections, gt)
    assert out[1, 3:].tolist() == [1, 0]
    warp = "resize_param { resize_mode: WARP height: 300 width: 300 }"
    out, _ = evaluate(make_layer, common + "overlap_threshold: 0.7 " + warp, detections, gt)
    assert out[1, 3:].tolist() == [1, 0]


def test_resize_param_maps_boxes_back(make_layer, tmp_path):
    """FIT_LARGE_SIZE_AND_PAD into 300 x 300 of a 100 x 200 image: y maps as (y - 0.25) / 0.5, then clips.

    The ground truth reaches into the padding: mapped back it equals the detection (IoU 1); warped, the two
    differ (pixel IoU 26 / 41 < 0.7).
    """
    sizes = tmp_path / "name_size.txt"
    sizes.write_text("img 100 200\n")
    detections = [[0, 1, 0.9, 0.1, 0.25, 0.5, 0.5]]
    gt = [[0, 1, 0, 0.1, 0.1, 0.5, 0.5, 0]]
    common = f"num_classes: 2 overlap_threshold: 0.7 name_size_file: '{sizes}' "
    out, _ = evaluate(make_layer, common + "resize_param { resize_mode: FIT_LARGE_SIZE_AND_PAD height: 300 "
                                           "width: 300 }", detections, gt)
    assert out[1, 3:].tolist() == [1, 0]
    out, _ = evaluate(make_layer, common + "resize_param { resize_mode: WARP height: 300 width: 300 }",
                      detections, gt)
    assert out[1, 3:].tolist() == [0, 1]


@pytest.mark.parametrize(("params", "field"), [
    ("background_label_id: 0", "num_classes"),
    ("num_classes: 3 overlap_threshold: 0", "overlap_threshold"),
    ("num_classes: 3 background_label_id: 3", "background_label_id"),
    ("num_classes: 3 name_size_file: '/nonexistent/sizes.txt'", "name_size_file"),
])
def test_refusals(make_layer, params, field):
    with pytest.raises(LayerSetupError, match=field):
        evaluate(make_layer, params)


def test_background_label_in_the_inputs_is_refused(make_layer):
    with pytest.raises(LayerSetupError, match="background label"):
        evaluate(make_layer, "num_classes: 3", [[0, 0, 0.5, 0, 0, 1, 1]], GT)
    with pytest.raises(LayerSetupError, match="background label -1"):
        evaluate(make_layer, "num_classes: 3 background_label_id: 4294967295", [[0, -1, -1, -1, -1, -1, -1]],
                 GT)
    with pytest.raises(LayerSetupError, match="background label"):
        evaluate(make_layer, "num_classes: 3", DETECTIONS, [[0, 0, 0, 0, 0, 1, 1, 0]])


def test_input_shapes_are_checked(make_layer):
    layer = make_layer(eval_text("num_classes: 3"))
    with pytest.raises(LayerSetupError, match="detections"):
        layer.setup([Blob((2, 7)), Blob((1, 1, 1, 8))], [Blob()])
    with pytest.raises(LayerSetupError, match="ground truth"):
        layer.setup([Blob((1, 1, 1, 7)), Blob((1, 2, 1, 8))], [Blob()])
    message = r"bottom 1 must have at most 4 axes, got shape \[1, 1, 1, 1, 8\]"
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([Blob((1, 1, 1, 7)), Blob((1, 1, 1, 1, 8))], [Blob()])
