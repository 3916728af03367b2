"""RefineDet's DetectionOutput: the fork's golden cases, the objectness filter (strict, class 0 whatever the
background), the cascaded decode derived by hand, NMS without nms_param, which layers the variant takes, and
refusals naming the bottom and the expected shape."""

import math

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_layers_ssd.detection_output import DetectionOutputLayer
from caffe_layers_ssd.refinedet_detection_output import RefineDetDetectionOutputLayer

BOTTOMS = ("odm_loc", "odm_conf", "arm_priorbox", "arm_conf", "arm_loc")


@pytest.mark.parametrize("case", ["refinedet_detout_5bottoms", "refinedet_detout_4bottoms",
                                  "refinedet_detout_bg1_quirk", "refinedet_detout_none"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


def layer_text(params, bottoms=BOTTOMS):
    names = " ".join(f"bottom: '{b}'" for b in bottoms)
    return f"name: 'det' type: 'DetectionOutput' {names} top: 'out' detection_output_param {{ {params} }}"


def run(make_layer, params, arrays):
    layer = make_layer(layer_text(params, BOTTOMS[:len(arrays)]))
    bottom = [Blob(np.shape(a)) for a in arrays]
    for blob, values in zip(bottom, arrays, strict=True):
        blob.mutable_cpu_data()[...] = values
    top = [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, top[0].cpu_data().reshape(-1, 7)


PRIORS = [[0.1, 0.1, 0.3, 0.3], [0.6, 0.6, 0.9, 0.9]]
VARIANCES = [0.1, 0.1, 0.2, 0.2]


def priors_blob(boxes=PRIORS):
    return np.concatenate([np.ravel(boxes), np.tile(VARIANCES, len(boxes))]).reshape(1, 2, -1)


# Prior 0 scores 0.7 for class 1 and 0.2 for class 2; prior 1 scores 0.1 and 0.8.
CONF = np.array([[0.1, 0.7, 0.2, 0.1, 0.1, 0.8]], np.float32)


@pytest.mark.parametrize(("objectness", "rows"), [
    # Prior 0's objectness 0.005 < 0.01: it scores [1, 0, 0] and class 0 is background, so only prior 1 stays.
    ([0.995, 0.005, 0.3, 0.7], [[0, 2, 0.8, *PRIORS[1]]]),
    # Exactly objectness_score is not below it (strict): both priors keep their ODM scores.
    ([0.99, 0.01, 0.3, 0.7], [[0, 1, 0.7, *PRIORS[0]], [0, 2, 0.8, *PRIORS[1]]]),
])
def test_objectness_filter(make_layer, objectness, rows):
    params = "num_classes: 3 confidence_threshold: 0.5 objectness_score: 0.01"
    _, out = run(make_layer, params, [np.zeros((1, 8)), CONF, priors_blob(), np.array([objectness])])
    np.testing.assert_allclose(out, rows, rtol=1e-6)


def test_filtered_priors_are_class_0_with_score_1_even_with_background_1(make_layer):
    """The fork's filter writes 1 into class 0, hard-coded: with background_label_id 1, class 0 is a class
    like any other and the filtered prior is reported as class 0, score 1."""
    params = "num_classes: 3 background_label_id: 1 confidence_threshold: 0.5"
    arm_conf = np.array([[0.995, 0.005, 0.3, 0.7]])
    _, out = run(make_layer, params, [np.zeros((1, 8)), CONF, priors_blob(), arm_conf])
    np.testing.assert_allclose(out, [[0, 0, 1.0, *PRIORS[0]], [0, 2, 0.8, *PRIORS[1]]], rtol=1e-6)


def test_cascaded_decode(make_layer):
    """Prior [0.2, 0.2, 0.6, 0.6] (0.4 wide and high, centre 0.4), variances [0.1, 0.1, 0.2, 0.2].
    arm_loc [0, 0, 5 ln 2, 0] doubles the width: refined anchor [0, 0.2, 0.8, 0.6] (0.8 wide).
    odm_loc [1, 0, 0, 0] then moves the centre by 0.1 x 1 x 0.8 = 0.08 (the ORIGINAL variance 0.1 times the
    REFINED width): [0.08, 0.2, 0.88, 0.6]."""
    prior = priors_blob([[0.2, 0.2, 0.6, 0.6]])
    arm_loc = np.array([[0, 0, 5 * math.log(2), 0]])
    params = "num_classes: 2 code_type: CENTER_SIZE"
    _, out = run(make_layer, params, [np.array([[1, 0, 0, 0]]), np.array([[0.1, 0.9]]), prior,
                                      np.array([[0.1, 0.9]]), arm_loc])
    np.testing.assert_allclose(out, [[0, 1, 0.9, 0.08, 0.2, 0.88, 0.6]], rtol=1e-5, atol=1e-6)
    # Four bottoms: no cascade, odm_loc decoded against the prior itself (centre + 0.1 x 1 x 0.4).
    _, out = run(make_layer, params, [np.array([[1, 0, 0, 0]]), np.array([[0.1, 0.9]]), prior,
                                      np.array([[0.1, 0.9]])])
    np.testing.assert_allclose(out, [[0, 1, 0.9, 0.24, 0.2, 0.64, 0.6]], rtol=1e-5, atol=1e-6)


def test_cascaded_decode_is_per_image(make_layer):
    """Two images, one prior: each image's odm_loc is decoded against its own refined anchor (CORNER code:
    refined = prior + 0.1 arm_loc, box = refined + 0.1 odm_loc on x and y, 0.2 on the maxima)."""
    prior = priors_blob([[0.2, 0.2, 0.6, 0.6]])
    arm_loc = np.array([[1, 0, 0, 0], [0, 1, 0, 0]])
    odm_loc = np.array([[0, 0, 1, 0], [0, 0, 0, 1]])
    conf = np.array([[0.1, 0.9], [0.2, 0.8]])
    _, out = run(make_layer, "num_classes: 2", [odm_loc, conf, prior, conf, arm_loc])
    np.testing.assert_allclose(out, [[0, 1, 0.9, 0.3, 0.2, 0.8, 0.6], [1, 1, 0.8, 0.2, 0.3, 0.6, 0.8]],
                               rtol=1e-5, atol=1e-6)


def test_without_nms_param_nms_runs_with_its_defaults(make_layer):
    """Unlike SSD's layer (inisis: no NMS without nms_param), RefineDet runs NMS at 0.3: two priors with
    IoU 0.6 keep only the better one."""
    prior = priors_blob([[0.1, 0.1, 0.5, 0.5], [0.1, 0.1, 0.5, 0.75]])
    conf = np.array([[0.1, 0.9, 0.2, 0.8]])
    _, out = run(make_layer, "num_classes: 2", [np.zeros((1, 8)), conf, prior, np.array([[0.5, 0.5] * 2])])
    np.testing.assert_allclose(out, [[0, 1, 0.9, 0.1, 0.1, 0.5, 0.5]], rtol=1e-6)


def test_nothing_found_gives_one_placeholder_row_per_image(make_layer):
    conf = np.array([[0.9, 0.1, 0.9, 0.1]] * 2)
    _, out = run(make_layer, "num_classes: 2 confidence_threshold: 0.5",
                 [np.zeros((2, 8)), conf, priors_blob(), np.full((2, 4), 0.5), np.zeros((2, 8))])
    np.testing.assert_array_equal(out, [[0, -1, -1, -1, -1, -1, -1], [1, -1, -1, -1, -1, -1, -1]])


def parse(text):
    return parse_text(text, caffe_pb2.LayerParameter())


@pytest.mark.parametrize(("bottoms", "params", "cls"), [
    (BOTTOMS[:3], "num_classes: 2", DetectionOutputLayer),
    (BOTTOMS[:4], "num_classes: 2", RefineDetDetectionOutputLayer),
    (BOTTOMS, "num_classes: 2", RefineDetDetectionOutputLayer),
    # SSD's fourth bottom, with visualize, is the image it draws on: SSD's layer.
    (("loc", "conf", "prior", "data"), "num_classes: 2 visualize: true", DetectionOutputLayer),
])
def test_which_layers_the_variant_takes(bottoms, params, cls):
    assert registry.layer_class_for(parse(layer_text(params, bottoms))) is cls


def test_share_location_false_with_arm_loc_is_refused(make_layer):
    with pytest.raises(LayerSetupError, match="share_location must be true"):
        run(make_layer, "num_classes: 2 share_location: false",
            [np.zeros((1, 16)), np.zeros((1, 4)), priors_blob(), np.zeros((1, 4)), np.zeros((1, 8))])


@pytest.mark.parametrize(("index", "shape", "expected"), [
    (3, (1, 6), r"arm_conf \(bottom 3, shape \(1, 6\)\).*expected shape \(1, 4\)"),
    (3, (2, 4), r"arm_conf \(bottom 3, shape \(2, 4\)\).*expected shape \(1, 4\)"),
    (4, (1, 4), r"arm_loc \(bottom 4, shape \(1, 4\)\).*expected shape \(1, 8\)"),
])
def test_arm_bottoms_must_match_the_priors(make_layer, index, shape, expected):
    arrays = [np.zeros((1, 8)), np.zeros((1, 4)), priors_blob(), np.zeros((1, 4)), np.zeros((1, 8))]
    arrays[index] = np.zeros(shape)
    with pytest.raises(LayerSetupError, match=r"layer 'det' \(type DetectionOutput\): " + expected):
        run(make_layer, "num_classes: 2", arrays)
