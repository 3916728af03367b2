"""DetectionOutput: the golden case, the fork's hand-computed cases (shared and per-class locations,
background 0 and -1, NMS top_k), inisis' behaviour without nms_param (every box, prior order, no threshold),
a loop reference over code types, variance in target, eta, thresholds, keep_top_k and NMS or none, the
no-detection output, the warnings for unsupported outputs, and refusals."""

import logging
import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing.golden import check_layer_case

CORNER, CENTER_SIZE, CORNER_SIZE = 1, 2, 3
CODE_NAMES = {CORNER: "CORNER", CENTER_SIZE: "CENTER_SIZE", CORNER_SIZE: "CORNER_SIZE"}


def det_text(params):
    return f"name: 'det' type: 'DetectionOutput' detection_output_param {{ {params} }}"


def run(make_layer, params, loc, conf, prior, extra=()):
    layer = make_layer(det_text(params))
    bottom = [Blob(np.shape(a)) for a in (loc, conf, prior, *extra)]
    for blob, values in zip(bottom, (loc, conf, prior, *extra), strict=True):
        blob.mutable_cpu_data()[...] = values
    top = [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return top[0]


def test_golden(golden_case):
    assert check_layer_case(golden_case("detection_output_center_size")) == []


# ----- the fork's hand-computed cases: 2 images, 4 priors on a 2x2 grid, 2 classes -----
def fork_priors():
    boxes = []
    for h in range(2):
        for w in range(2):
            cx, cy = (w + 0.5) * 0.5, (h + 0.5) * 0.5
            boxes.append([cx - 0.15, cy - 0.15, cx + 0.15, cy + 0.15])
    return np.concatenate([np.ravel(boxes), np.full(16, 0.1)]).reshape(1, 2, 16)


def fork_conf():
    conf = np.zeros((2, 4, 2))
    for i in range(2):
        for j in range(4):
            for c in range(2):
                conf[i, j, c] = j * 0.2 if i % 2 == c % 2 else 1 - j * 0.2
    return conf.reshape(2, 8)


def fork_loc(share):
    classes = 1 if share else 2
    loc = np.zeros((2, 4, classes, 4))
    for i in range(2):
        for h in range(2):
            for w in range(2):
                for c in range(classes):
                    value = i + c / 2 + 0.5
                    sx, sy = (-1 if w % 2 else 1), (-1 if h % 2 else 1)
                    loc[i, h * 2 + w, c] = [sx * value, sy * value, sx * value, sy * value]
    return loc.reshape(2, -1)


@pytest.mark.parametrize(("params", "share", "rows"), [
    ("share_location: true background_label_id: 0", True,
     ["0 1 1.0 0.15 0.15 0.45 0.45", "0 1 0.8 0.55 0.15 0.85 0.45", "0 1 0.6 0.15 0.55 0.45 0.85",
      "0 1 0.4 0.55 0.55 0.85 0.85", "1 1 0.6 0.45 0.45 0.75 0.75", "1 1 0.0 0.25 0.25 0.55 0.55"]),
    ("share_location: true background_label_id: 0 nms_param { top_k: 2 }", True,
     ["0 1 1.0 0.15 0.15 0.45 0.45", "0 1 0.8 0.55 0.15 0.85 0.45", "1 1 0.6 0.45 0.45 0.75 0.75"]),
    ("share_location: false background_label_id: -1", False,
     ["0 0 0.6 0.55 0.55 0.85 0.85", "0 0 0.4 0.15 0.55 0.45 0.85", "0 0 0.2 0.55 0.15 0.85 0.45",
      "0 0 0.0 0.15 0.15 0.45 0.45", "0 1 1.0 0.20 0.20 0.50 0.50", "0 1 0.8 0.50 0.20 0.80 0.50",
      "0 1 0.6 0.20 0.50 0.50 0.80", "0 1 0.4 0.50 0.50 0.80 0.80", "1 0 1.0 0.25 0.25 0.55 0.55",
      "1 0 0.4 0.45 0.45 0.75 0.75", "1 1 0.6 0.40 0.40 0.70 0.70"]),
    ("share_location: false background_label_id: -1 nms_param { top_k: 2 }", False,
     ["0 0 0.6 0.55 0.55 0.85 0.85", "0 0 0.4 0.15 0.55 0.45 0.85", "0 1 1.0 0.20 0.20 0.50 0.50",
      "0 1 0.8 0.50 0.20 0.80 0.50", "1 0 1.0 0.25 0.25 0.55 0.55", "1 1 0.6 0.40 0.40 0.70 0.70"]),
    ("share_location: false background_label_id: 0", False,
     ["0 1 1.0 0.20 0.20 0.50 0.50", "0 1 0.8 0.50 0.20 0.80 0.50", "0 1 0.6 0.20 0.50 0.50 0.80",
      "0 1 0.4 0.50 0.50 0.80 0.80", "1 1 0.6 0.40 0.40 0.70 0.70"]),
    ("share_location: false background_label_id: 0 nms_param { top_k: 2 }", False,
     ["0 1 1.0 0.20 0.20 0.50 0.50", "0 1 0.8 0.50 0.20 0.80 0.50", "1 1 0.6 0.40 0.40 0.70 0.70"]),
])
def test_forks_hand_computed_cases(make_layer, params, share, rows):
    params = "num_classes: 2 " + params.replace("nms_param {", "nms_param { nms_threshold: 0.1")
    if "nms_param" not in params:
        params += " nms_param { nms_threshold: 0.1 }"
    top = run(make_layer, params, fork_loc(share), fork_conf(), fork_priors())
    assert top.shape == (1, 1, len(rows), 7)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7), [[float(v) for v in r.split()] for r in rows],
                               atol=1e-6)


# ----- a loop reference -----
def decode(prior, var, code, in_target, loc):
    var = np.ones(4) if in_target else var
    pw, ph = prior[2] - prior[0], prior[3] - prior[1]
    if code == CORNER:
        return prior + var * loc
    if code == CORNER_SIZE:
        return prior + var * loc * np.array([pw, ph, pw, ph])
    cx = var[0] * loc[0] * pw + (prior[0] + prior[2]) / 2
    cy = var[1] * loc[1] * ph + (prior[1] + prior[3]) / 2
    w, h = math.exp(var[2] * loc[2]) * pw, math.exp(var[3] * loc[3]) * ph
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def reference(loc, conf, prior, classes, share, background, code, in_target, score_threshold, threshold, eta,
              top_k, keep_top_k, nms):
    """inisis' CPU Forward with `nms` its ApplyNMSFast; threshold None means no nms_param: every prior kept
    in order, no threshold."""
    num, priors = loc.shape[0], prior.shape[-1] // 4
    boxes, variances = prior[0, 0].reshape(priors, 4), prior[0, 1].reshape(priors, 4)
    rows = []
    for i in range(num):
        loc_i = loc[i].reshape(priors, 1 if share else classes, 4)
        conf_i = conf[i].reshape(priors, classes)
        decoded, kept = {}, {}
        for c in range(classes):
            if c == background:
                continue
            column = 0 if share else c
            decoded[c] = [decode(boxes[p], variances[p], code, in_target, loc_i[p, column])
                          for p in range(priors)]
            if threshold is None:
                kept[c] = list(range(priors))
            else:
                kept[c] = nms(decoded[c], conf_i[:, c], score_threshold, threshold, eta, top_k)
        if keep_top_k > -1 and sum(len(v) for v in kept.values()) > keep_top_k:
            pairs = sorted([(conf_i[p, c], c, p) for c in sorted(kept) for p in kept[c]], key=lambda t: -t[0])
            kept = {}
            for _, c, p in pairs[:keep_top_k]:
                kept.setdefault(c, []).append(p)
        for c in sorted(kept):
            rows += [[i, c, conf_i[p, c], *decoded[c][p]] for p in kept[c]]
    return np.array(rows) if rows else np.array([[i, -1, -1, -1, -1, -1, -1] for i in range(num)])


def random_inputs(rng, num, classes, share, grid=3):
    boxes = []
    for h in range(grid):
        for w in range(grid):
            cx, cy = (w + 0.5) / grid, (h + 0.5) / grid
            for bw, bh in ((0.3, 0.3), (0.45, 0.2)):
                boxes.append([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])
    priors = len(boxes)
    prior = np.concatenate([np.ravel(boxes), np.tile([0.1, 0.1, 0.2, 0.2], priors)]).reshape(1, 2, -1)
    loc = rng.normal(0, 0.7, (num, priors * (1 if share else classes) * 4))
    logits = rng.normal(0, 1.5, (num, priors, classes))
    conf = np.exp(logits) / np.exp(logits).sum(axis=2, keepdims=True)
    return loc.astype(np.float32), conf.reshape(num, -1).astype(np.float32), prior.astype(np.float32)


@pytest.mark.parametrize(("code", "in_target", "share", "background", "threshold", "eta", "top_k", "keep",
                          "conf"), [
    (CENTER_SIZE, False, True, 0, 0.45, 1.0, 10, 7, 0.2),
    (CORNER, False, True, 0, 0.3, 1.0, -1, -1, None),
    (CORNER, True, False, 1, 0.5, 1.0, 5, 8, 0.15),
    (CORNER_SIZE, False, False, -1, 0.6, 0.8, -1, 20, 0.1),
    (CORNER_SIZE, True, True, -1, 0.7, 0.5, 6, -1, 0.25),
    (CENTER_SIZE, True, False, 0, 0.4, 1.0, -1, 3, 0.3),
    (CENTER_SIZE, False, True, 0, None, 1.0, -1, -1, 0.2),
    (CORNER, False, False, -1, None, 1.0, -1, 30, 0.5),
    (CORNER_SIZE, True, True, 2, None, 1.0, -1, 40, None),
])
def test_forward_against_reference(make_layer, fork_nms, code, in_target, share, background, threshold, eta,
                                   top_k, keep, conf):
    rng = np.random.default_rng(code * 10 + background)
    loc, scores, prior = random_inputs(rng, 2, 4, share)
    params = (f"num_classes: 4 share_location: {str(share).lower()} background_label_id: {background} "
              f"code_type: {CODE_NAMES[code]} variance_encoded_in_target: {str(in_target).lower()} "
              f"keep_top_k: {keep} "
              + (f"nms_param {{ nms_threshold: {threshold} eta: {eta} " if threshold is not None else "")
              + (f"top_k: {top_k} }}" if top_k > -1 else "}" if threshold is not None else "")
              + (f" confidence_threshold: {conf}" if conf is not None else ""))
    top = run(make_layer, params, loc, scores, prior)
    want = reference(loc.astype(float), scores, prior.astype(float), 4, share, background, code, in_target,
                     np.float32(conf) if conf is not None else -np.inf, threshold, eta, top_k, keep,
                     fork_nms.fast)
    assert top.shape == (1, 1, len(want), 7)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7), want, rtol=1e-5, atol=1e-6)


def test_keep_top_k_keeps_the_label_grouping(make_layer):
    """keep_top_k 2 (then 3) of an image's 4 boxes (no nms_param: no NMS): the best by score, grouped by
    label, and by score inside a label (prior 1 before prior 0 for label 2)."""
    prior = np.array([[[0, 0, 0.3, 0.3, 0.6, 0.6, 1, 1], [0.1] * 8]], np.float32)
    conf = np.array([[0.1, 0.5, 0.4, 0.2, 0.3, 0.5]], np.float32)
    top = run(make_layer, "num_classes: 3 keep_top_k: 2", np.zeros((1, 8)), conf, prior)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7)[:, :3], [[0, 1, 0.5], [0, 2, 0.5]], rtol=1e-6)
    top = run(make_layer, "num_classes: 3 keep_top_k: 3", np.zeros((1, 8)), conf, prior)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7)[:, :3], [[0, 1, 0.5], [0, 2, 0.5], [0, 2, 0.4]],
                               rtol=1e-6)


FORK_BOXES = {0: ["0.15 0.15 0.45 0.45", "0.55 0.15 0.85 0.45", "0.15 0.55 0.45 0.85", "0.55 0.55 0.85 0.85"],
              1: ["0.25 0.25 0.55 0.55", "0.45 0.25 0.75 0.55", "0.25 0.45 0.55 0.75", "0.45 0.45 0.75 0.75"]}


@pytest.mark.parametrize(("keep", "rows"), [
    # Every prior of label 1 in prior order, scores below the threshold included (image 1's are ascending).
    (-1, [f"0 1 {s} {FORK_BOXES[0][p]}" for p, s in enumerate([1.0, 0.8, 0.6, 0.4])]
     + [f"1 1 {s} {FORK_BOXES[1][p]}" for p, s in enumerate([0.0, 0.2, 0.4, 0.6])]),
    # keep_top_k 4 cuts nothing (the fork cuts only when an image has more): the prior order stays.
    (4, [f"0 1 {s} {FORK_BOXES[0][p]}" for p, s in enumerate([1.0, 0.8, 0.6, 0.4])]
     + [f"1 1 {s} {FORK_BOXES[1][p]}" for p, s in enumerate([0.0, 0.2, 0.4, 0.6])]),
    # keep_top_k 3 cuts both images: the best 3 by score, listed by score (image 1: priors 3, 2, 1).
    (3, [f"0 1 {s} {FORK_BOXES[0][p]}" for p, s in ((0, 1.0), (1, 0.8), (2, 0.6))]
     + [f"1 1 {s} {FORK_BOXES[1][p]}" for p, s in ((3, 0.6), (2, 0.4), (1, 0.2))]),
])
def test_without_nms_param_every_box_is_kept(make_layer, keep, rows):
    """inisis without nms_param: no NMS and no confidence_threshold; keep_top_k still applies."""
    top = run(make_layer, f"num_classes: 2 confidence_threshold: 0.5 keep_top_k: {keep}", fork_loc(True),
              fork_conf(), fork_priors())
    assert top.shape == (1, 1, len(rows), 7)
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7), [[float(v) for v in r.split()] for r in rows],
                               atol=1e-6)


def test_without_nms_param_per_class_locations(make_layer):
    """No background, per-class boxes: 2 labels x 4 priors per image, by label, then prior."""
    top = run(make_layer, "num_classes: 2 share_location: false background_label_id: -1", fork_loc(False),
              fork_conf(), fork_priors())
    out = top.cpu_data().reshape(-1, 7)
    assert out.shape == (16, 7)
    np.testing.assert_array_equal(out[:, :2], [[i, c] for i in range(2) for c in range(2) for _ in range(4)])
    np.testing.assert_allclose(out[:8, 2], [0, 0.2, 0.4, 0.6, 1, 0.8, 0.6, 0.4], atol=1e-6)
    # Image 0, label 1, prior 0: offsets (0.5 + 0.5) * 0.1 on [0.1, 0.1, 0.4, 0.4].
    np.testing.assert_allclose(out[4, 3:], [0.2, 0.2, 0.5, 0.5], atol=1e-6)


def test_keep_top_k_zero_without_nms_gives_placeholders(make_layer):
    top = run(make_layer, "num_classes: 2 keep_top_k: 0", fork_loc(True), fork_conf(), fork_priors())
    np.testing.assert_array_equal(top.cpu_data().reshape(-1, 7)[:, :2], [[0, -1], [1, -1]])


def test_no_detection_gives_one_placeholder_row_per_image(make_layer):
    top = run(make_layer, "num_classes: 2 confidence_threshold: 1 nms_param { }", fork_loc(True), fork_conf(),
              fork_priors())
    assert top.shape == (1, 1, 2, 7)
    np.testing.assert_array_equal(top.cpu_data().reshape(2, 7), [[0, -1, -1, -1, -1, -1, -1],
                                                                 [1, -1, -1, -1, -1, -1, -1]])


def test_confidence_threshold_is_strict(make_layer):
    top = run(make_layer, "num_classes: 2 confidence_threshold: 0.6 nms_param { nms_threshold: 0.1 }",
              fork_loc(True), fork_conf(), fork_priors())
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7)[:, 2], [1.0, 0.8], rtol=1e-6)


def test_shared_locations_with_no_background(make_layer):
    top = run(make_layer, "num_classes: 2 background_label_id: -1 nms_param { nms_threshold: 0.1 top_k: 1 }",
              fork_loc(True), fork_conf(), fork_priors())
    np.testing.assert_allclose(top.cpu_data().reshape(-1, 7)[:, :3], [[0, 0, 0.6], [0, 1, 1], [1, 0, 1],
                                                                      [1, 1, 0.6]], rtol=1e-6)


def test_saving_and_visualizing_warn_once_and_keep_the_detections(make_layer, caplog):
    params = ("num_classes: 2 nms_param { nms_threshold: 0.1 } visualize: true save_output_param { "
              "output_directory: 'results' output_name_prefix: 'comp4_' output_format: 'VOC' "
              "label_map_file: 'labelmap.prototxt' name_size_file: 'sizes.txt' }")
    image = np.zeros((2, 3, 4, 4), np.float32)
    with caplog.at_level(logging.WARNING, logger="caffe.ssd"):
        top = run(make_layer, params, fork_loc(True), fork_conf(), fork_priors(), extra=(image,))
    messages = [r.getMessage() for r in caplog.records]
    assert sum("save_output_param" in m for m in messages) == 1
    assert sum("visualize" in m for m in messages) == 1
    assert top.shape == (1, 1, 6, 7)


@pytest.mark.parametrize(("params", "field"), [
    ("share_location: true", "num_classes"),
    ("num_classes: 2 nms_param { nms_threshold: -0.1 }", "nms_threshold"),
    ("num_classes: 2 nms_param { eta: 0 }", "eta"),
    ("num_classes: 2 nms_param { eta: 1.5 }", "eta"),
    ("num_classes: 3", "confidence predictions"),
    ("num_classes: 2 share_location: false", "location predictions"),
])
def test_refusals(make_layer, params, field):
    with pytest.raises(LayerSetupError, match=field):
        run(make_layer, params, fork_loc(True), fork_conf(), fork_priors())


def test_image_counts_must_agree(make_layer):
    with pytest.raises(LayerSetupError, match="same number of images"):
        run(make_layer, "num_classes: 2", fork_loc(True), fork_conf()[:1], fork_priors())


@pytest.mark.parametrize(("values", "polygon"), [(12, "use_polygon: true"), (9, "use_polygon: false")])
def test_a_textboxes_loc_head_names_the_variant(make_layer, values, polygon):
    """12 or 9 location values per prior: SSD's layer says the net looks like TextBoxes++'s and how to
    choose that variant."""
    loc = np.zeros((2, 4 * values), np.float32)
    with pytest.raises(LayerSetupError, match=rf"loc \(bottom 0, shape \(2, {4 * values}\)\) holds {values} "
                                              rf"location values per prior.*TextBoxes\+\+ net \({polygon}\).*"
                                              r"prefer_provider\('DetectionOutput', "
                                              r"'caffe-layers-ssd\[textboxes\]'\).*CAFFE_LAYER_PROVIDERS"):
        run(make_layer, "num_classes: 2", loc, fork_conf(), fork_priors())
