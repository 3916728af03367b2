"""Box arithmetic: sizes, overlaps (with the pixel-box quirk), encode/decode for the three code types,
clipping, scaling and mapping back to the original image."""

import numpy as np
import pytest

from caffe_layers_ssd import bbox
from caffe_layers_ssd.bbox import CENTER_SIZE, CORNER, CORNER_SIZE
from caffe_layers_ssd.params import ResizeParameter


def test_box_size():
    boxes = [[0.1, 0.2, 0.4, 0.6], [0.5, 0.5, 0.4, 0.9], [0, 0, 0, 0], [2, 3, 5, 4]]
    np.testing.assert_allclose(bbox.box_size(boxes), [0.12, 0, 0, 3], rtol=1e-6)
    np.testing.assert_allclose(bbox.box_size(boxes, normalized=False), [1.3 * 1.4, 0, 1, 8], rtol=1e-6)
    assert bbox.box_size(boxes).dtype == np.float32


def test_jaccard_overlap_hand_values():
    a = np.array([0.0, 0.0, 0.5, 0.5])
    others = np.array([[0.0, 0.0, 0.4, 0.5], [0.25, 0.25, 0.75, 0.75], [0.5, 0.5, 1, 1],
                       [0.6, 0.6, 0.9, 0.9]])
    np.testing.assert_allclose(bbox.jaccard_overlap(a, others), [0.8, 0.0625 / 0.4375, 0, 0], rtol=1e-6)


def test_jaccard_overlap_broadcasts_and_is_symmetric():
    rng = np.random.default_rng(3)
    lo = rng.uniform(0, 0.6, (5, 2))
    a = np.concatenate([lo, lo + rng.uniform(0.05, 0.4, (5, 2))], axis=1)
    lo = rng.uniform(0, 0.6, (4, 2))
    b = np.concatenate([lo, lo + rng.uniform(0.05, 0.4, (4, 2))], axis=1)
    matrix = bbox.jaccard_overlap(a[:, None], b[None])
    assert matrix.shape == (5, 4)
    np.testing.assert_array_equal(matrix, bbox.jaccard_overlap(b[None], a[:, None]))
    for i in range(5):
        for j in range(4):
            ix = max(0.0, min(a[i, 2], b[j, 2]) - max(a[i, 0], b[j, 0]))
            iy = max(0.0, min(a[i, 3], b[j, 3]) - max(a[i, 1], b[j, 1]))
            union = (a[i, 2] - a[i, 0]) * (a[i, 3] - a[i, 1]) + (b[j, 2] - b[j, 0]) * (b[j, 3] - b[j, 1])
            assert matrix[i, j] == pytest.approx(ix * iy / (union - ix * iy), rel=1e-5, abs=1e-7)


def test_pixel_overlap_of_disjoint_boxes_counts_one_pixel():
    """The fork intersects disjoint boxes as (0, 0, 0, 0), which measures 1 x 1 in pixel mode."""
    a, b = np.array([10.0, 10, 19, 19]), np.array([30.0, 30, 39, 39])
    sizes = bbox.box_size([a, b], normalized=False)
    assert bbox.jaccard_overlap(a, b, sizes[0], sizes[1], normalized=False) == pytest.approx(1 / 199)
    assert bbox.jaccard_overlap(a, b) == 0


PRIORS = np.array([[0.1, 0.2, 0.3, 0.5], [0.4, 0.4, 0.9, 0.6]], np.float32)
VARIANCES = np.array([[0.1, 0.1, 0.2, 0.2], [0.1, 0.2, 0.3, 0.4]], np.float32)
LOC = np.array([[0.5, -1.0, 0.3, 0.2], [-0.4, 0.1, -0.2, 0.7]], np.float32)


def reference_decode(prior, var, code, in_target, loc):
    var = np.ones(4) if in_target else var
    px0, py0, px1, py1 = prior
    pw, ph = px1 - px0, py1 - py0
    if code == CORNER:
        return prior + var * loc
    if code == CORNER_SIZE:
        return prior + var * loc * np.array([pw, ph, pw, ph])
    cx = var[0] * loc[0] * pw + (px0 + px1) / 2
    cy = var[1] * loc[1] * ph + (py0 + py1) / 2
    w, h = np.exp(var[2] * loc[2]) * pw, np.exp(var[3] * loc[3]) * ph
    return np.array([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


@pytest.mark.parametrize("code", [CORNER, CENTER_SIZE, CORNER_SIZE])
@pytest.mark.parametrize("in_target", [False, True])
def test_decode_against_reference(code, in_target):
    got = bbox.decode_boxes(PRIORS, VARIANCES, code, in_target, LOC)
    assert got.dtype == np.float32
    for i in range(2):
        want = reference_decode(PRIORS[i].astype(float), VARIANCES[i].astype(float), code, in_target,
                                LOC[i].astype(float))
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("code", [CORNER, CENTER_SIZE, CORNER_SIZE])
@pytest.mark.parametrize("in_target", [False, True])
def test_encode_inverts_decode(code, in_target):
    boxes = bbox.decode_boxes(PRIORS, VARIANCES, code, in_target, LOC)
    np.testing.assert_allclose(bbox.encode_boxes(PRIORS, VARIANCES, code, in_target, boxes), LOC,
                               rtol=1e-4, atol=1e-5)


def test_encode_center_size_hand_values():
    prior, var = np.array([0.0, 0.0, 0.5, 0.5]), np.array([0.1, 0.1, 0.2, 0.2])
    box = np.array([0.1, 0.0, 0.5, 1.0])
    # centre (0.3, 0.5) vs (0.25, 0.25); size (0.4, 1.0) vs (0.5, 0.5)
    want = [0.05 / 0.5 / 0.1, 0.25 / 0.5 / 0.1, np.log(0.8) / 0.2, np.log(2.0) / 0.2]
    np.testing.assert_allclose(bbox.encode_boxes(prior, var, CENTER_SIZE, False, box), want, rtol=1e-5)
    np.testing.assert_allclose(bbox.encode_boxes(prior, var, CORNER, False, box), [1, 0, 0, 2.5], rtol=1e-5)


def test_unknown_code_type():
    with pytest.raises(ValueError, match="code_type"):
        bbox.decode_boxes(PRIORS, VARIANCES, 7, False, LOC)
    with pytest.raises(ValueError, match="code_type"):
        bbox.encode_boxes(PRIORS, VARIANCES, 0, False, LOC)


def test_clip_scale_and_cross_boundary():
    boxes = np.array([[-0.1, 0.2, 1.3, 0.9], [0.2, 0.3, 0.4, 0.5]], np.float32)
    np.testing.assert_allclose(bbox.clip_boxes(boxes), [[0, 0.2, 1, 0.9], [0.2, 0.3, 0.4, 0.5]])
    np.testing.assert_allclose(bbox.clip_boxes(boxes * 100, 50, 80), [[0, 20, 80, 50], [20, 30, 40, 50]])
    np.testing.assert_array_equal(bbox.is_cross_boundary(boxes), [True, False])
    scaled, sizes = bbox.scale_boxes(boxes[1:], 100, 200)
    np.testing.assert_allclose(scaled, [[40, 30, 80, 50]], rtol=1e-6)
    assert sizes[0] == pytest.approx(41 * 21)
    _, unit = bbox.scale_boxes(boxes[1:], 1, 1)
    assert unit[0] == pytest.approx(0.04)


def test_split_priors():
    data = np.arange(16, dtype=np.float32).reshape(1, 2, 8)
    boxes, variances = bbox.split_priors(data, 2)
    np.testing.assert_array_equal(boxes, [[0, 1, 2, 3], [4, 5, 6, 7]])
    np.testing.assert_array_equal(variances, [[8, 9, 10, 11], [12, 13, 14, 15]])


def test_output_boxes_warp_clips_then_scales():
    boxes = np.array([[-0.1, 0.25, 0.5, 1.2]], np.float32)
    out, sizes = bbox.output_boxes(boxes, 200, 100)
    np.testing.assert_allclose(out, [[0, 50, 50, 200]], rtol=1e-6)
    assert sizes[0] == pytest.approx(51 * 151)
    warp = ResizeParameter(resize_mode=ResizeParameter.WARP, height=300, width=300)
    np.testing.assert_array_equal(bbox.output_boxes(boxes, 200, 100, warp)[0], out)


def test_output_boxes_fit_large_size_and_pad():
    """A 100 x 200 (h x w) image padded into 300 x 300: content rows 75..225, so y maps (y - 0.25) / 0.5."""
    param = ResizeParameter(resize_mode=ResizeParameter.FIT_LARGE_SIZE_AND_PAD, height=300, width=300)
    boxes = np.array([[0.1, 0.3, 0.5, 0.7], [0.1, 0.0, 0.5, 0.2]], np.float32)
    out, _ = bbox.output_boxes(boxes, 100, 200, param)
    np.testing.assert_allclose(out[0], [20, 10, 100, 90], rtol=1e-5)
    # A box entirely in the padding keeps its coordinates (the fork's ProjectBBox fails), then is scaled.
    np.testing.assert_allclose(out[1], [20, 0, 100, 20], rtol=1e-5)
    tall = bbox.output_boxes(np.array([[0.3, 0.1, 0.7, 0.5]], np.float32), 200, 100, param)[0]
    np.testing.assert_allclose(tall[0], [10, 20, 90, 100], rtol=1e-5)


def test_output_boxes_fit_small_size():
    boxes = np.array([[0.1, 0.2, 0.6, 0.9]], np.float32)
    plain = ResizeParameter(resize_mode=ResizeParameter.FIT_SMALL_SIZE, height=300, width=300)
    np.testing.assert_allclose(bbox.output_boxes(boxes, 100, 200, plain)[0], [[20, 20, 120, 90]], rtol=1e-6)
    scaled = ResizeParameter(resize_mode=ResizeParameter.FIT_SMALL_SIZE, height=300, width=300,
                             height_scale=150, width_scale=400)
    out, sizes = bbox.output_boxes(boxes, 100, 200, scaled)
    np.testing.assert_allclose(out, [[40, 30, 200, 100]], rtol=1e-6)
    assert sizes[0] == pytest.approx(160 * 70)


def test_output_boxes_needs_a_resize_size():
    with pytest.raises(ValueError, match="height and width"):
        bbox.output_boxes([[0, 0, 1, 1]], 10, 10, ResizeParameter(resize_mode=ResizeParameter.FIT_SMALL_SIZE))
