"""MultiBoxLoss: a hand-built three-prior case (loss value and gradients) under every option, gradient checks
with the fork's checker parameters at points where matching and mining are stable, refusals, CPU/GPU
parity."""

import logging
import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

# ----- the hand-built case: one image, priors p0, p1, p2 (variance 0.1), one box of label 1 -----
# gt (0, 0, 0.4, 0.5) overlaps p0 (0, 0, 0.5, 0.5) with IoU 0.8 and misses p1 and p2. CORNER targets of p0:
# (gt - p0) / 0.1 = (0, 0, -1, 0); with p0's prediction (0.5, -0.5, 0, 2) the smooth L1 loss is
# 0.125 + 0.125 + 0.5 + 1.5 = 2.25 and its gradient (0.5, -0.5, 1, 1).
PRIOR_BOXES = [[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0.5, 0, 1, 0.5]]
GT_ROW = [0, 1, 0, 0, 0, 0.4, 0.5, 0]
LOC = [[0.5, -0.5, 0, 2], [0.3, 0.3, 0.3, 0.3], [0.1, 0.2, 0.3, 0.4]]
CONF = [[0, 1], [2, 0], [0.5, 0]]


def softplus(x):
    return math.log1p(math.exp(x))


# Softmax losses of the label (p0: class 1) or background (p1, p2): log(1 + e^-margin).
CONF_LOSS = [softplus(-1), softplus(-2), softplus(-0.5)]
LOC_LOSS = 2.25


def prior_blob(boxes=PRIOR_BOXES, variance=0.1):
    boxes = np.asarray(boxes, np.float32).reshape(-1)
    return np.concatenate([boxes, np.full(boxes.size, variance)]).reshape(1, 2, -1)


def loss_text(params="", extra=""):
    return (f"name: 'mbox_loss' type: 'MultiBoxLoss' multibox_loss_param {{ num_classes: 2 {params} }} "
            f"{extra}")


def bottoms(loc=LOC, conf=CONF, prior=None, gt=(GT_ROW,), num=1):
    prior = prior_blob() if prior is None else prior
    arrays = [np.reshape(loc, (num, -1)), np.reshape(conf, (num, -1)), prior, np.reshape(gt, (1, 1, -1, 8))]
    blobs = []
    for array in arrays:
        blob = Blob(np.shape(array))
        blob.mutable_cpu_data()[...] = array
        blobs.append(blob)
    return blobs


def run(make_layer, params="", extra="", top_diff=None, **data):
    """Loss, loc diff (P, 4 * columns) and conf diff (P, C) after forward and backward."""
    layer = make_layer(loss_text(params, extra))
    bottom, top = bottoms(**data), [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    if top_diff is not None:
        top[0].mutable_cpu_diff()[...] = top_diff
    layer.backward(top, [True, True, False, False], bottom)
    priors = bottom[2].shape[2] // 4
    return float(top[0].cpu_data()), bottom[0].cpu_diff().reshape(priors, -1), bottom[1].cpu_diff().reshape(
        priors, -1)


def softmax(row):
    e = np.exp(np.asarray(row, float) - max(row))
    return e / e.sum()


def softmax_diff(prior, label):
    diff = softmax(CONF[prior])
    diff[label] -= 1
    return diff


def test_hand_built_case(make_layer):
    loss, loc_diff, conf_diff = run(make_layer)
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    np.testing.assert_allclose(loc_diff, [[0.5, -0.5, 1, 1], [0] * 4, [0] * 4], rtol=1e-5)
    np.testing.assert_allclose(conf_diff, [softmax_diff(0, 1), softmax_diff(1, 0), softmax_diff(2, 0)],
                               rtol=1e-5)


def test_max_negative_takes_the_hardest_negatives(make_layer):
    """neg_pos_ratio 1 with one positive: only p2 (loss 0.47 > p1's 0.13) is mined."""
    loss, _, conf_diff = run(make_layer, "neg_pos_ratio: 1")
    assert loss == pytest.approx(LOC_LOSS + CONF_LOSS[0] + CONF_LOSS[2], rel=1e-5)
    np.testing.assert_array_equal(conf_diff[1], [0, 0])
    np.testing.assert_allclose(conf_diff[2], softmax_diff(2, 0), rtol=1e-5)


def test_bipartite_matching_takes_every_ground_truth_box(make_layer):
    """A second box overlapping only p2 (IoU 0.36, below overlap_threshold) still gets p2: two positives."""
    _, _, conf_diff = run(make_layer, "match_type: BIPARTITE", gt=(GT_ROW, [0, 1, 0, 0.6, 0, 1, 0.45, 0]))
    np.testing.assert_allclose(conf_diff[2], softmax_diff(2, 1) / 2, rtol=1e-5)


def test_neg_overlap_excludes_near_misses(make_layer):
    """p3 overlaps the box matched by p1 (IoU 1/3) without matching it: negative unless neg_overlap < 1/3."""
    priors = [*PRIOR_BOXES, [0.5, 0.25, 1, 0.75]]
    data = {"loc": [*LOC, [0, 0, 0, 0]], "conf": [*CONF, [1.5, 0]], "prior": prior_blob(priors),
            "gt": (GT_ROW, [0, 1, 0, 0.5, 0.5, 1, 1, 0])}
    _, _, conf_diff = run(make_layer, "match_type: BIPARTITE neg_pos_ratio: 5", **data)
    assert conf_diff[3].any() and conf_diff[2].any()
    _, _, conf_diff = run(make_layer, "match_type: BIPARTITE neg_pos_ratio: 5 neg_overlap: 0.3", **data)
    assert not conf_diff[3].any() and conf_diff[2].any()


def test_no_mining_uses_every_prior(make_layer):
    loss, _, conf_diff = run(make_layer, "mining_type: NONE neg_pos_ratio: 1")
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    assert (conf_diff[1] != 0).all()


@pytest.mark.parametrize(("normalization", "divisor"), [("VALID", 1), ("FULL", 3), ("BATCH_SIZE", 1),
                                                         ("NONE", 1)])
def test_normalization(make_layer, normalization, divisor):
    loss, loc_diff, _ = run(make_layer, "", f"loss_param {{ normalization: {normalization} }}")
    assert loss == pytest.approx((LOC_LOSS + sum(CONF_LOSS)) / divisor, rel=1e-5)
    np.testing.assert_allclose(loc_diff[0], np.array([0.5, -0.5, 1, 1]) / divisor, rtol=1e-5)


def test_deprecated_normalize_chooses_batch_size_or_valid(make_layer):
    """A second box equal to p1 gives two matches: normalize false divides by the batch (1), true by 2."""
    gt = (GT_ROW, [0, 1, 0, 0.5, 0.5, 1, 1, 0])
    # p1 targets 0 against predictions 0.3: 4 x 0.045; p1's label-1 softmax loss log(1 + e^2).
    total = LOC_LOSS + 4 * 0.045 + CONF_LOSS[0] + softplus(2) + CONF_LOSS[2]
    loss, _, _ = run(make_layer, "", "loss_param { normalize: false }", gt=gt)
    assert loss == pytest.approx(total, rel=1e-5)
    loss, _, _ = run(make_layer, "", "loss_param { normalize: true }", gt=gt)
    assert loss == pytest.approx(total / 2, rel=1e-5)


def test_loc_weight_and_l2(make_layer):
    loss, loc_diff, _ = run(make_layer, "loc_weight: 2 loc_loss_type: L2")
    l2 = 0.5 * (0.25 + 0.25 + 1 + 4)
    assert loss == pytest.approx(2 * l2 + sum(CONF_LOSS), rel=1e-5)
    np.testing.assert_allclose(loc_diff[0], [1, -1, 2, 4], rtol=1e-5)


def test_top_diff_scales_the_gradients(make_layer):
    _, loc_diff, conf_diff = run(make_layer, top_diff=3.0)
    np.testing.assert_allclose(loc_diff[0], [1.5, -1.5, 3, 3], rtol=1e-5)
    np.testing.assert_allclose(conf_diff[0], 3 * softmax_diff(0, 1), rtol=1e-5)


def test_propagate_down_selects_the_parts_of_the_loss(make_layer):
    loss, _, _ = run(make_layer, extra="propagate_down: false propagate_down: true propagate_down: false "
                                       "propagate_down: false")
    assert loss == pytest.approx(sum(CONF_LOSS), rel=1e-5)
    loss, _, _ = run(make_layer, extra="propagate_down: true propagate_down: false propagate_down: false "
                                       "propagate_down: false")
    assert loss == pytest.approx(LOC_LOSS, rel=1e-5)


def test_logistic_confidence(make_layer):
    """Sigmoid cross-entropy summed over classes; targets one-hot (background for the negatives)."""
    loss, _, conf_diff = run(make_layer, "conf_loss_type: LOGISTIC")
    targets = np.array([[0, 1], [1, 0], [1, 0]])
    x = np.array(CONF, float)
    want = (np.log1p(np.exp(x)) - x * targets).sum()
    assert loss == pytest.approx(LOC_LOSS + want, rel=1e-5)
    np.testing.assert_allclose(conf_diff, 1 / (1 + np.exp(-x)) - targets, rtol=1e-5)


def test_logistic_without_mining_keeps_the_forks_target_layout(make_layer):
    """Without mining the fork indexes image i's targets at i * P + prior * C + label (flat): the second
    image's positive (prior 0, class 1) lands on entry 3 + 0 + 1 = 4, i.e. image 0, prior 2, class 0."""
    loc = np.concatenate([np.reshape(LOC, -1)] * 2).reshape(2, -1)
    conf = np.concatenate([np.reshape(CONF, -1)] * 2).reshape(2, -1)
    gt = (GT_ROW, [1, *GT_ROW[1:]])
    layer = make_layer(loss_text("conf_loss_type: LOGISTIC mining_type: NONE"))
    bottom, top = bottoms(loc=loc, conf=conf, gt=gt, num=2), [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    layer.backward(top, [False, True, False, False], bottom)
    x = np.array(CONF, float)
    sigmoid = 1 / (1 + np.exp(-x))
    targets_0 = np.array([[0, 1], [0, 0], [1, 0]])
    targets_1 = np.zeros((3, 2))
    diff = bottom[1].cpu_diff().reshape(2, 3, 2) * 2  # normalizer: 2 matches
    np.testing.assert_allclose(diff[0], sigmoid - targets_0, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(diff[1], sigmoid - targets_1, rtol=1e-5, atol=1e-7)


def test_center_size_targets(make_layer):
    loss, loc_diff, _ = run(make_layer, "code_type: CENTER_SIZE")
    target = [(0.2 - 0.25) / 0.5 / 0.1, 0, math.log(0.8) / 0.1, 0]
    diff = np.array(LOC[0]) - target
    smooth = np.where(np.abs(diff) < 1, 0.5 * diff ** 2, np.abs(diff) - 0.5)
    assert loss == pytest.approx(smooth.sum() + sum(CONF_LOSS), rel=1e-5)
    np.testing.assert_allclose(loc_diff[0], np.where(np.abs(diff) < 1, diff, np.sign(diff)), rtol=1e-5)


def test_encode_variance_in_target_divides_both_and_copies_the_gradient(make_layer):
    """Predictions and targets are both divided by the variance; the fork copies the gradient of the divided
    prediction to the bottom unchanged (no chain rule through the division)."""
    loss, loc_diff, _ = run(make_layer, "encode_variance_in_target: true")
    diff = np.array(LOC[0]) / 0.1 - np.array([0, 0, -0.1, 0]) / 0.1
    smooth = np.where(np.abs(diff) < 1, 0.5 * diff ** 2, np.abs(diff) - 0.5)
    assert loss == pytest.approx(smooth.sum() + sum(CONF_LOSS), rel=1e-5)
    np.testing.assert_allclose(loc_diff[0], np.where(np.abs(diff) < 1, diff, np.sign(diff)), rtol=1e-5)


def test_bp_inside_zeroes_coordinates_of_priors_outside_the_image(make_layer):
    priors = [[-0.1, 0, 0.5, 0.5], *PRIOR_BOXES[1:]]
    _, loc_diff, _ = run(make_layer, "bp_inside: true", prior=prior_blob(priors))
    assert loc_diff[0, 0] == 0
    assert (loc_diff[0, 1:] != 0).all()


def test_ignore_cross_boundary_bbox(make_layer):
    """p0 crosses the image border: ignored for matching, so nothing matches and every prior is negative."""
    priors = [[-0.1, 0, 0.5, 0.5], *PRIOR_BOXES[1:]]
    loss, loc_diff, conf_diff = run(make_layer, "ignore_cross_boundary_bbox: true mining_type: NONE",
                                    prior=prior_blob(priors))
    assert loss == pytest.approx(softplus(1) + CONF_LOSS[1] + CONF_LOSS[2], rel=1e-5)
    assert not loc_diff.any()
    loss, _, _ = run(make_layer, "mining_type: NONE", prior=prior_blob(priors))
    assert loss > LOC_LOSS


def test_difficult_ground_truth(make_layer):
    difficult = [*GT_ROW[:7], 1]
    loss, _, _ = run(make_layer, "use_difficult_gt: false mining_type: NONE", gt=(difficult,))
    assert loss == pytest.approx(softplus(1) + CONF_LOSS[1] + CONF_LOSS[2], rel=1e-5)
    loss, _, _ = run(make_layer, "mining_type: NONE", gt=(difficult,))
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)


def test_rows_of_item_minus_one_and_other_images_are_skipped(make_layer):
    loss, _, _ = run(make_layer, gt=(GT_ROW, [-1, 0, 0, 0, 0, 0, 0, 0], [3, 1, 0, 0.5, 0.5, 1, 1, 0]))
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)


def test_matching_on_decoded_predictions(make_layer):
    """use_prior_for_matching false: p1's prediction decodes exactly onto the ground truth, so p1 matches."""
    loc = [LOC[0], [-5, -5, -6, -5], LOC[2]]
    _, loc_diff, conf_diff = run(make_layer, "use_prior_for_matching: false overlap_threshold: 0.5", loc=loc)
    assert not loc_diff[0].any()
    np.testing.assert_allclose(loc_diff[1], 0, atol=1e-5)
    assert conf_diff[1, 1] < 0 < conf_diff[1, 0]
    _, loc_diff, _ = run(make_layer, "overlap_threshold: 0.5", loc=loc)
    assert loc_diff[0].any()


def test_bipartite_versus_per_prediction(make_layer):
    """Two priors cover the box: bipartite matches the best one only; per-prediction adds the other."""
    priors = [[0, 0, 0.5, 0.5], [0, 0, 0.4, 0.6], PRIOR_BOXES[2]]
    _, bipartite, _ = run(make_layer, "match_type: BIPARTITE mining_type: NONE", prior=prior_blob(priors))
    _, per_prediction, _ = run(make_layer, "match_type: PER_PREDICTION mining_type: NONE",
                               prior=prior_blob(priors))
    assert bipartite[:2].any(axis=1).tolist() == [False, True]
    assert per_prediction[:2].any(axis=1).tolist() == [True, True]


def test_per_class_locations(make_layer):
    loc = np.zeros((3, 2, 4))
    loc[:, 1] = LOC
    loc[:, 0] = 9
    loss, loc_diff, _ = run(make_layer, "share_location: false mining_type: NONE", loc=loc)
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    np.testing.assert_allclose(loc_diff.reshape(3, 2, 4)[0], [[0] * 4, [0.5, -0.5, 1, 1]], rtol=1e-5)
    assert not loc_diff.reshape(3, 2, 4)[1:].any()


def test_map_object_to_agnostic(make_layer):
    agnostic_gt = [0, 7, *GT_ROW[2:]]
    loss, _, _ = run(make_layer, "map_object_to_agnostic: true mining_type: NONE", gt=(agnostic_gt,))
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    with pytest.raises(LayerSetupError, match="label 7"):
        run(make_layer, "mining_type: NONE", gt=(agnostic_gt,))


def test_hard_example_mining(make_layer):
    """Per-prior loss: p0 2.25 + 0.31, p1 0.13, p2 0.47. sample_size 2 keeps p0 and mines p2."""
    loss, _, conf_diff = run(make_layer, "mining_type: HARD_EXAMPLE sample_size: 2")
    assert loss == pytest.approx(LOC_LOSS + CONF_LOSS[0] + CONF_LOSS[2], rel=1e-5)
    assert not conf_diff[1].any()


def test_hard_example_mining_drops_unpicked_positives(make_layer):
    """p0 predicted perfectly: its loss is ~0, so sample_size 1 picks p2 and p0 stops being a positive."""
    loc = [[0, 0, -1, 0], *LOC[1:]]
    conf = [[-8, 8], *CONF[1:]]
    loss, loc_diff, conf_diff = run(make_layer, "mining_type: HARD_EXAMPLE sample_size: 1", loc=loc,
                                    conf=conf)
    assert loss == pytest.approx(CONF_LOSS[2], rel=1e-5)
    assert not loc_diff.any() and not conf_diff[:2].any()


def test_hard_example_mining_with_nms(make_layer):
    """NMS on the loss over the priors (use_prior_for_nms); without top_k the fork's nms top_k is 0, so
    nothing is picked and the positive is dropped too."""
    loss, _, conf_diff = run(make_layer, "mining_type: HARD_EXAMPLE use_prior_for_nms: true "
                                         "nms_param { nms_threshold: 0.5 top_k: 5 }")
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    loss, loc_diff, conf_diff = run(make_layer, "mining_type: HARD_EXAMPLE nms_param { nms_threshold: 0.5 }")
    assert loss == 0 and not loc_diff.any() and not conf_diff.any()


def test_deprecated_do_neg_mining(make_layer, caplog):
    with caplog.at_level(logging.WARNING, logger="caffe.ssd"):
        loss, _, _ = run(make_layer, "do_neg_mining: true")
    assert "deprecated" in caplog.text
    assert loss == pytest.approx(LOC_LOSS + sum(CONF_LOSS), rel=1e-5)
    with pytest.raises(LayerSetupError, match="do_neg_mining"):
        run(make_layer, "do_neg_mining: false")


@pytest.mark.parametrize(("params", "field"), [
    ("", "num_classes"),
    ("num_classes: 0", "num_classes"),
    ("num_classes: 2 share_location: false", "share_location"),
    ("num_classes: 2 background_label_id: 2", "background_label_id"),
    ("num_classes: 3 map_object_to_agnostic: true mining_type: NONE", "map_object_to_agnostic"),
    ("num_classes: 2 mining_type: HARD_EXAMPLE sample_size: 0", "sample_size"),
    ("num_classes: 3", "confidence predictions"),
])
def test_refusals(make_layer, params, field):
    layer = make_layer(f"name: 'mbox_loss' type: 'MultiBoxLoss' multibox_loss_param {{ {params} }}")
    with pytest.raises(LayerSetupError, match=field):
        layer.setup(bottoms(), [Blob()])


def test_background_label_in_the_ground_truth_is_refused(make_layer):
    with pytest.raises(LayerSetupError, match="background"):
        run(make_layer, gt=([0, 0, *GT_ROW[2:]],))


def test_no_gradient_to_priors_or_labels(make_layer):
    layer = make_layer(loss_text())
    bottom, top = bottoms(), [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    with pytest.raises(LayerSetupError, match="prior"):
        layer.backward(top, [True, True, True, False], bottom)
    with pytest.raises(LayerSetupError, match="label"):
        layer.backward(top, [True, True, False, True], bottom)
    assert [layer.allow_force_backward(i) for i in range(4)] == [True, False, True, True]


def test_defaults(make_layer):
    layer = make_layer(loss_text())
    layer.setup(bottoms(), [Blob()])
    assert list(layer.layer_param.loss_weight) == [1]
    assert list(layer.layer_param.propagate_down) == [True, True, False, False]


# ----- gradient checks: two images, 16 priors from a PriorBox layer, three classes -----
def gradient_inputs(make_layer, share):
    prior_layer = make_layer("name: 'pb' type: 'PriorBox' prior_box_param { min_size: 5 max_size: 10 "
                             "aspect_ratio: 3 flip: true clip: false }")
    prior = Blob()
    prior_layer.setup([Blob((2, 1, 2, 2)), Blob((2, 3, 10, 10))], [prior])
    prior_layer.forward([Blob((2, 1, 2, 2)), Blob((2, 3, 10, 10))], [prior])
    priors = prior.shape[2] // 4
    rng = np.random.default_rng(7)
    loc = Blob((2, priors * (1 if share else 3) * 4))
    loc.mutable_cpu_data()[...] = rng.normal(0, 0.4, loc.shape)
    # Background logits 0.3 apart keep the mined negatives' order stable under the checker's step.
    conf = rng.normal(0, 0.1, (2, priors, 3))
    conf[..., 0] = rng.permutation(2 * priors).reshape(2, priors) * 0.3 - 3
    conf_blob = Blob((2, priors * 3))
    conf_blob.mutable_cpu_data()[...] = conf.reshape(2, -1)
    gt = Blob((1, 1, 4, 8))
    gt.mutable_cpu_data()[...] = np.array([[0, 1, 0, .1, .1, .3, .3, 0], [1, 1, 0, .1, .1, .3, .3, 0],
                                           [1, 2, 0, .2, .2, .4, .4, 0], [1, 2, 1, .6, .6, .8, .9, 1]]
                                          ).reshape(1, 1, 4, 8)
    return [loc, conf_blob, prior, gt]


@pytest.mark.parametrize("config", [
    "share_location: true match_type: BIPARTITE mining_type: NONE",
    "share_location: true match_type: PER_PREDICTION mining_type: MAX_NEGATIVE",
    "share_location: true match_type: PER_PREDICTION mining_type: HARD_EXAMPLE",
    "share_location: true mining_type: MAX_NEGATIVE conf_loss_type: LOGISTIC loc_loss_type: L2",
    "share_location: true mining_type: HARD_EXAMPLE conf_loss_type: LOGISTIC use_difficult_gt: false",
    "share_location: false match_type: BIPARTITE mining_type: NONE",
    "share_location: false match_type: PER_PREDICTION mining_type: NONE conf_loss_type: LOGISTIC",
    "share_location: true code_type: CENTER_SIZE mining_type: MAX_NEGATIVE loc_weight: 2",
])
@pytest.mark.parametrize("normalization", ["VALID", "FULL"])
@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient(make_layer, config, normalization, check_bottom):
    share = "share_location: true" in config
    propagate = " ".join(f"propagate_down: {str(i == check_bottom).lower()}" for i in range(4))
    layer = make_layer(f"name: 'mbox_loss' type: 'MultiBoxLoss' multibox_loss_param {{ num_classes: 3 "
                       f"overlap_threshold: 0.3 {config} }} loss_param {{ normalization: {normalization} }} "
                       f"{propagate}")
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, gradient_inputs(make_layer, share),
                                                                [Blob()], check_bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    loc, conf, prior, gt = (np.reshape(LOC, (1, -1)), np.reshape(CONF, (1, -1)), prior_blob(),
                            np.reshape(GT_ROW, (1, 1, 1, 8)))
    gpu_matches_cpu(loss_text(), [loc, conf, prior, gt], rtol=1e-4, atol=1e-5,
                    propagate_down=[True, True, False, False])


def test_logistic_without_background(make_layer):
    """background_label_id 4294967295 is the fork's -1: every target starts at -1, positives get a 1."""
    loss, _, conf_diff = run(make_layer, "conf_loss_type: LOGISTIC mining_type: NONE "
                                         "background_label_id: 4294967295")
    x = np.array(CONF, float)
    targets = np.array([[-1, 1], [-1, -1], [-1, -1]])
    want = (np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0) - x * targets).sum()
    assert loss == pytest.approx(LOC_LOSS + want, rel=1e-5)
    np.testing.assert_allclose(conf_diff, 1 / (1 + np.exp(-x)) - targets, rtol=1e-5)
