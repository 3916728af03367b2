"""TextBoxes++'s DetectionOutput: the fork's golden cases (use_polygon true, unset, false), the quadrilateral
and rotated-box decodes derived by hand, NMS on the horizontal boxes only, the empty result, which layers the
variant takes (use_polygon, a net's denser PriorBox), and refusals."""

import logging
import math

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_layers_ssd import params as ssd_params
from caffe_layers_ssd.detection_output import DetectionOutputLayer
from caffe_layers_ssd.textboxes_detection_output import (
    TextBoxesDetectionOutputLayer,
    decode_quads,
    decode_rboxes,
    sets_denser_prior_boxes,
)

PRIOR = [0.2, 0.2, 0.6, 0.6]          # 0.4 wide and high, centre (0.4, 0.4)
VARIANCES = [0.1, 0.1, 0.2, 0.2]


@pytest.mark.parametrize("case", ["tbpp_detout_polygon", "tbpp_detout_rbox"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


def test_golden_use_polygon_unset_with_the_variant_chosen(golden_case, prefer_provider):
    """use_polygon unset (default true) and no denser PriorBox in the net: chosen by the user."""
    prefer_provider("DetectionOutput", "caffe-layers-ssd[textboxes]")
    assert check_layer_case(golden_case("tbpp_detout_polygon_default")) == []


def test_golden_use_polygon_unset_builds_ssds_layer_which_says_how_to_choose(golden_case):
    with pytest.raises(LayerSetupError, match=r"TextBoxes\+\+ net \(use_polygon: true\).*caffe-layers-ssd"
                                              r"\[textboxes\]"):
        check_layer_case(golden_case("tbpp_detout_polygon_default"))


def test_decode_quads_from_the_priors_corners():
    """Each corner moves by variance x offset x prior size from the prior's own corner (tl, tr, br, bl)."""
    quads = decode_quads(np.array(PRIOR), np.array(VARIANCES), np.array([1, 0, 0, 1, -1, 0, 0, -1]))
    np.testing.assert_allclose(quads, [0.24, 0.2, 0.6, 0.24, 0.56, 0.6, 0.2, 0.56], rtol=1e-6)
    # The y offsets use variance[1] and the prior height, the x offsets variance[0] and the width.
    quads = decode_quads(np.array([0, 0, 1, 0.5]), np.array([0.5, 0.1, 1, 1]), np.ones(8))
    np.testing.assert_allclose(quads, [0.5, 0.05, 1.5, 0.05, 1.5, 0.55, 0.5, 0.55], rtol=1e-6)


def test_decode_rboxes_from_the_priors_centre():
    """x1, y1, x2, y2 move from the prior's centre; h = exp(variance[3] x offset) x prior height."""
    rboxes = decode_rboxes(np.array(PRIOR), np.array(VARIANCES), np.array([1, 0, -1, 2, 5 * math.log(2)]))
    np.testing.assert_allclose(rboxes, [0.44, 0.4, 0.36, 0.48, 0.8], rtol=1e-6)


def layer_text(params, bottoms=("loc", "conf", "prior")):
    names = " ".join(f"bottom: '{b}'" for b in bottoms)
    return f"name: 'det' type: 'DetectionOutput' {names} top: 'out' detection_output_param {{ {params} }}"


def run(make_layer, params, loc, conf, prior):
    layer = make_layer(layer_text(params))
    arrays = (loc, conf, prior)
    bottom = [Blob(np.shape(a)) for a in arrays]
    for blob, values in zip(bottom, arrays, strict=True):
        blob.mutable_cpu_data()[...] = values
    top = [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return top[0]


def priors_blob(boxes):
    return np.concatenate([np.ravel(boxes), np.tile(VARIANCES, len(boxes))]).reshape(1, 2, -1)


def test_nms_uses_the_horizontal_boxes_only(make_layer):
    """Two priors with the same box but very different quadrilaterals: the second is suppressed."""
    loc = np.zeros((1, 2, 12))
    loc[0, 1, 4:] = [5, 0, 5, 0, 5, 0, 5, 0]
    top = run(make_layer, "num_classes: 2 code_type: CENTER_SIZE use_polygon: true nms_param { }",
              loc.reshape(1, -1), [[0.2, 0.8, 0.3, 0.7]], priors_blob([PRIOR, PRIOR]))
    assert top.shape == (1, 1, 1, 15)
    np.testing.assert_allclose(top.cpu_data().reshape(15), [0, 1, 0.8, *PRIOR, 0.2, 0.2, 0.6, 0.2, 0.6, 0.6,
                                                            0.2, 0.6], rtol=1e-6)


def test_rbox_rows(make_layer):
    loc = np.array([[0, 0, 0, 0, 1, 0, -1, 2, 5 * math.log(2)]])
    top = run(make_layer, "num_classes: 2 code_type: CENTER_SIZE use_polygon: false", loc, [[0.2, 0.8]],
              priors_blob([PRIOR]))
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 12),
                               [[0, 1, 0.8, *PRIOR, 0.44, 0.4, 0.36, 0.48, 0.8]], rtol=1e-6)


@pytest.mark.parametrize(("polygon", "width"), [("true", 15), ("false", 12)])
def test_nothing_found_gives_one_placeholder_row_per_image(make_layer, polygon, width):
    values = 12 if polygon == "true" else 9
    top = run(make_layer, f"num_classes: 2 code_type: CENTER_SIZE use_polygon: {polygon} "
                          "confidence_threshold: 0.9", np.zeros((2, values)), [[0.5, 0.5]] * 2,
              priors_blob([PRIOR]))
    assert top.shape == (1, 1, 2, width)
    want = np.full((2, width), -1.0)
    want[:, 0] = [0, 1]
    np.testing.assert_array_equal(top.cpu_data().reshape(2, width), want)


def test_other_code_types_write_zeros_and_warn(make_layer, caplog):
    """The fork fills the quadrilateral only for CENTER_SIZE with variances in the priors."""
    with caplog.at_level(logging.WARNING, logger="caffe.ssd"):
        top = run(make_layer, "num_classes: 2 code_type: CORNER use_polygon: true", np.ones((1, 12)),
                  [[0.2, 0.8]], priors_blob([PRIOR]))
    assert any("written as 0" in r.getMessage() for r in caplog.records)
    np.testing.assert_allclose(top.cpu_data().reshape(15), [0, 1, 0.8, 0.3, 0.3, 0.8, 0.8] + [0] * 8,
                               rtol=1e-6)


def test_loc_head_must_hold_12_values_per_prior(make_layer):
    with pytest.raises(LayerSetupError, match=r"layer 'det' \(type DetectionOutput\): Number of priors must "
                                              r"match number of location predictions: 1 priors x 1 location "
                                              r"classes x 12 != 9 \(loc shape \(1, 9\)\)"):
        run(make_layer, "num_classes: 2 use_polygon: true", np.zeros((1, 9)), [[0.2, 0.8]],
            priors_blob([PRIOR]))


def parse(text):
    return parse_text(text, caffe_pb2.LayerParameter())


@pytest.mark.parametrize(("params", "cls"), [
    ("num_classes: 2", DetectionOutputLayer),
    ("num_classes: 2 use_polygon: true", TextBoxesDetectionOutputLayer),
    ("num_classes: 2 use_polygon: false", TextBoxesDetectionOutputLayer),
])
def test_which_layers_the_variant_takes(params, cls):
    assert registry.layer_class_for(parse(layer_text(params))) is cls


def test_a_plain_priorbox_does_not_make_a_net_textboxes():
    prior_box = parse("name: 'pb' type: 'PriorBox' bottom: 'f' bottom: 'd' top: 'p' "
                      "prior_box_param { min_size: 30 }")
    det = parse(layer_text("num_classes: 2"))
    assert not sets_denser_prior_boxes(prior_box)
    assert registry.layer_class_for(det, [prior_box, det]) is DetectionOutputLayer


def test_a_denser_priorbox_makes_every_detection_output_of_the_net_textboxes():
    if "denser_prior_boxes" not in ssd_params.PriorBoxParameter.DESCRIPTOR.fields_by_name:
        pytest.skip("PriorBoxParameter has no denser_prior_boxes (field 14) in this checkout")
    prior_box = parse("name: 'pb' type: 'PriorBox' bottom: 'f' bottom: 'd' top: 'p' "
                      "prior_box_param { min_size: 30 denser_prior_boxes: true }")
    det = parse(layer_text("num_classes: 2"))
    assert sets_denser_prior_boxes(prior_box)
    assert registry.layer_class_for(det, [prior_box, det]) is TextBoxesDetectionOutputLayer


def test_the_net_rule_reads_every_priorbox(monkeypatch):
    """Whatever says a PriorBox is denser: one such PriorBox anywhere in the net chooses TextBoxes++'s layer
    for a DetectionOutput that leaves use_polygon unset."""
    from caffe_layers_ssd import textboxes_detection_output

    monkeypatch.setattr(textboxes_detection_output, "sets_denser_prior_boxes",
                        lambda layer: layer.name == "pb2")
    first, second = (parse(f"name: '{n}' type: 'PriorBox' prior_box_param {{ min_size: 30 }}")
                     for n in ("pb1", "pb2"))
    det = parse(layer_text("num_classes: 2"))
    assert registry.layer_class_for(det, [first, det]) is DetectionOutputLayer
    assert registry.layer_class_for(det, [first, second, det]) is TextBoxesDetectionOutputLayer
