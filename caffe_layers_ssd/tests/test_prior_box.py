"""PriorBox: the golden cases (SSD's, TextBoxes++' denser_prior_boxes), a loop reference over every option
(sizes truncated to integers, flipped and deduplicated aspect ratios, max sizes, clipping (on by default, as
in inisis), explicit image size and step, offset, variances, denser copies), refusals."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing.golden import check_layer_case


@pytest.mark.parametrize("case", ["priorbox_ssd_first", "tbpp_priorbox_denser",
                                  "tbpp_priorbox_denser_offset_clip"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


def reference_priors(feat_hw, img_hw, min_sizes, max_sizes=(), ratios=(), flip=True, clip=True,
                     variances=(), img=None, step=None, offset=0.5, denser=False):
    """The fork's PriorBoxLayer loops, in float64 (the layer rounds like the C++; tolerance covers it)."""
    layer_h, layer_w = feat_hw
    img_h, img_w = img if img else img_hw
    step_h, step_w = step if step else (img_h / layer_h, img_w / layer_w)
    all_ratios = [1.0]
    for r in ratios:
        if all(abs(r - known) >= 1e-6 for known in all_ratios):
            all_ratios.append(r)
            if flip:
                all_ratios.append(1 / r)
    boxes = []
    for h in range(layer_h):
        for w in range(layer_w):
            cx, cy = (w + offset) * step_w, (h + offset) * step_h
            for s, size in enumerate(min_sizes):
                size = int(size)
                shapes = [(size, size)]
                if max_sizes:
                    side = math.sqrt(size * int(max_sizes[s]))
                    shapes.append((side, side))
                shapes += [(size * math.sqrt(r), size / math.sqrt(r))
                           for r in all_ratios if abs(r - 1) >= 1e-6]
                for bw, bh in shapes:
                    for y in ([cy, (h + 1) * step_h] if denser else [cy]):
                        boxes.append([(cx - bw / 2) / img_w, (y - bh / 2) / img_h, (cx + bw / 2) / img_w,
                                      (y + bh / 2) / img_h])
    boxes = np.array(boxes).reshape(-1)
    if clip:
        boxes = np.clip(boxes, 0, 1)
    variances = list(variances) or [0.1]
    return boxes, np.resize(np.array(variances), boxes.size)


def run(make_layer, params, feat=(1, 8, 4, 5), img=(1, 3, 40, 60)):
    layer = make_layer(f"name: 'pb' type: 'PriorBox' prior_box_param {{ {params} }}")
    bottom, top = [Blob(feat), Blob(img)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, top[0]


@pytest.mark.parametrize(("params", "options"), [
    ("min_size: 12", {"min_sizes": [12]}),
    ("min_size: 12.7 max_size: 30.9", {"min_sizes": [12.7], "max_sizes": [30.9]}),
    ("min_size: 12.7 max_size: 30.9 clip: false", {"min_sizes": [12.7], "max_sizes": [30.9], "clip": False}),
    ("min_size: 10 aspect_ratio: 2 aspect_ratio: 3 flip: false", {"min_sizes": [10], "ratios": [2, 3],
                                                                    "flip": False}),
    ("min_size: 10 aspect_ratio: 2 aspect_ratio: 0.5 aspect_ratio: 1 aspect_ratio: 2 clip: false",
     {"min_sizes": [10], "ratios": [2, 0.5, 1, 2], "clip": False}),
    ("min_size: 8 min_size: 20 max_size: 16 max_size: 35 aspect_ratio: 3 clip: true "
     "variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2",
     {"min_sizes": [8, 20], "max_sizes": [16, 35], "ratios": [3], "clip": True,
      "variances": [0.1, 0.1, 0.2, 0.2]}),
    ("min_size: 30 img_size: 100 step: 16 offset: 0 variance: 0.3",
     {"min_sizes": [30], "img": (100, 100), "step": (16, 16), "offset": 0, "variances": [0.3]}),
    ("min_size: 30 img_h: 90 img_w: 120 step_h: 10 step_w: 12.5 aspect_ratio: 1.5",
     {"min_sizes": [30], "img": (90, 120), "step": (10, 12.5), "ratios": [1.5]}),
    ("min_size: 8 min_size: 20 max_size: 16 max_size: 35 aspect_ratio: 3 denser_prior_boxes: true "
     "clip: false",
     {"min_sizes": [8, 20], "max_sizes": [16, 35], "ratios": [3], "clip": False, "denser": True}),
    ("min_size: 30 step_h: 10 step_w: 12.5 offset: 0.2 denser_prior_boxes: true variance: 0.3",
     {"min_sizes": [30], "step": (10, 12.5), "offset": 0.2, "variances": [0.3], "denser": True}),
])
def test_forward_against_reference(make_layer, params, options):
    _, top = run(make_layer, params)
    boxes, variances = reference_priors((4, 5), (40, 60), **options)
    assert top.shape == (1, 2, boxes.size)
    np.testing.assert_allclose(top.cpu_data()[0, 0], boxes, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(top.cpu_data()[0, 1], variances, rtol=1e-6)


def test_counts_and_order_per_cell(make_layer):
    """min 4 + max 9 + ratio 2 flipped: 4 priors per cell: 4x4, 6x6 (sqrt 36), 4*sqrt2 x 4/sqrt2, flipped."""
    layer, top = run(make_layer, "min_size: 4 max_size: 9 aspect_ratio: 2", feat=(1, 1, 1, 1),
                     img=(1, 1, 10, 10))
    assert layer.num_priors == 4
    boxes = top.cpu_data()[0, 0].reshape(4, 4)
    widths, heights = (boxes[:, 2] - boxes[:, 0]) * 10, (boxes[:, 3] - boxes[:, 1]) * 10
    np.testing.assert_allclose(widths, [4, 6, 4 * math.sqrt(2), 4 / math.sqrt(2)], rtol=1e-5)
    np.testing.assert_allclose(heights, [4, 6, 4 / math.sqrt(2), 4 * math.sqrt(2)], rtol=1e-5)
    np.testing.assert_allclose((boxes[:, 0] + boxes[:, 2]) / 2, 0.5, rtol=1e-6)


def test_denser_copies_by_hand(make_layer):
    """One 20 x 20 cell, min 10 max 40 (sqrt 400 = 20), offset 0.5: each prior centred at (10, 10), then its
    copy at (10, 20) = (h + 1) * step_h; x unchanged; 4 priors, variances for all of them."""
    layer, top = run(make_layer, "min_size: 10 max_size: 40 clip: false denser_prior_boxes: true",
                     feat=(1, 1, 1, 1), img=(1, 1, 20, 20))
    assert layer.num_priors == 4
    expected = np.array([[5, 5, 15, 15], [5, 15, 15, 25], [0, 0, 20, 20], [0, 10, 20, 30]]) / 20
    np.testing.assert_allclose(top.cpu_data()[0, 0].reshape(4, 4), expected, rtol=1e-6)
    np.testing.assert_array_equal(top.cpu_data()[0, 1], np.full(16, np.float32(0.1)))


def test_textboxes_deploy_priors_per_cell(make_layer):
    """TextBoxes++' deploy PriorBox: (min + max + 8 ratio boxes) x 2 = 20 priors per cell."""
    layer, top = run(make_layer, "min_size: 30 max_size: 60 aspect_ratio: 2 aspect_ratio: 3 aspect_ratio: 4 "
                                 "aspect_ratio: 5 flip: true denser_prior_boxes: true step: 8")
    assert layer.num_priors == 20 and top.shape == (1, 2, 4 * 5 * 20 * 4)
    _, plain = run(make_layer, "min_size: 30 max_size: 60 aspect_ratio: 2 aspect_ratio: 3 aspect_ratio: 4 "
                               "aspect_ratio: 5 flip: true step: 8")
    # The even priors are SSD's priors, in SSD's order.
    np.testing.assert_array_equal(top.cpu_data()[0, 0].reshape(-1, 2, 4)[:, 0],
                                  plain.cpu_data()[0, 0].reshape(-1, 4))


def test_unclipped_priors_may_leave_the_image(make_layer):
    _, top = run(make_layer, "min_size: 30 clip: false", feat=(1, 1, 1, 1), img=(1, 1, 20, 20))
    np.testing.assert_allclose(top.cpu_data()[0, 0], [-0.25, -0.25, 1.25, 1.25], rtol=1e-6)


def test_priors_are_clipped_by_default(make_layer):
    """inisis declares clip default true: the 30 px prior centred in a 20 px image becomes [0, 0, 1, 1]."""
    _, top = run(make_layer, "min_size: 30", feat=(1, 1, 1, 1), img=(1, 1, 20, 20))
    np.testing.assert_array_equal(top.cpu_data()[0, 0], [0, 0, 1, 1])


def test_sizes_follow_the_feature_map(make_layer):
    layer = make_layer("name: 'pb' type: 'PriorBox' prior_box_param { min_size: 5 aspect_ratio: 2 }")
    bottom, top = [Blob((2, 3, 3, 3)), Blob((2, 3, 30, 30))], [Blob()]
    layer.setup(bottom, top)
    assert top[0].shape == (1, 2, 3 * 3 * 3 * 4)
    bottom[0].reshape((2, 3, 2, 4))
    layer.forward(bottom, top)
    assert top[0].shape == (1, 2, 2 * 4 * 3 * 4)


@pytest.mark.parametrize(("params", "field"), [
    ("aspect_ratio: 2", "min_size"),
    ("min_size: 0", "min_size"),
    ("min_size: 10 max_size: 5", "max_size"),
    ("min_size: 10 min_size: 20 max_size: 30", "max_size"),
    ("min_size: 10 variance: 0.1 variance: 0.2", "variance"),
    ("min_size: 10 variance: -0.1", "variance"),
    ("min_size: 10 img_size: 300 img_h: 300", "img_size"),
    ("min_size: 10 img_h: 300", "img_w"),
    ("min_size: 10 img_size: 0", "img_size"),
    ("min_size: 10 step: 8 step_w: 8", "step"),
    ("min_size: 10 step_h: 8", "step_w"),
    ("min_size: 10 step: 0", "step"),
])
def test_refusals(make_layer, params, field):
    with pytest.raises(LayerSetupError, match=field):
        run(make_layer, params)


def test_needs_two_bottoms(make_layer):
    layer = make_layer("name: 'pb' type: 'PriorBox' prior_box_param { min_size: 10 }")
    with pytest.raises(LayerSetupError, match="2 bottom"):
        layer.setup([Blob((1, 1, 2, 2))], [Blob()])
