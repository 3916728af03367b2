"""generate_anchors and the shifted anchors, as py-faster-rcnn makes them."""

import numpy as np

from caffe_layers_rcnn.anchors import generate_anchors, shifted_anchors

# What py-faster-rcnn's generate_anchors() returns. (The MATLAB anchors quoted in its comment are these
# plus one: 1-based pixel coordinates.)
REFERENCE = [[-84, -40, 99, 55], [-176, -88, 191, 103], [-360, -184, 375, 199],
             [-56, -56, 71, 71], [-120, -120, 135, 135], [-248, -248, 263, 263],
             [-36, -80, 51, 95], [-80, -168, 95, 183], [-168, -344, 183, 359]]


def test_default_anchors_are_py_faster_rcnns():
    anchors = generate_anchors()
    assert anchors.dtype == np.float64
    np.testing.assert_array_equal(anchors, REFERENCE)


def test_ratio_major_order_and_other_scales():
    anchors = generate_anchors(16, [1.0, 2.0], [4.0, 8.0, 16.0, 32.0])
    assert anchors.shape == (8, 4)
    # Ratio 1, scale 4: 64 x 64 around (7.5, 7.5); ratio 2: 11 x 22 before scaling, 44 x 88 at scale 4.
    np.testing.assert_array_equal(anchors[:4], [[-24, -24, 39, 39], REFERENCE[3], REFERENCE[4], REFERENCE[5]])
    np.testing.assert_array_equal(anchors[4:], [[-14, -36, 29, 51], REFERENCE[6], REFERENCE[7], REFERENCE[8]])


def test_sizes_round_half_to_even_as_numpy():
    # base 18, ratio 0.5: width round(sqrt(648)) = 25, height round(12.5) = 12 (np.round), centre 8.5.
    np.testing.assert_array_equal(generate_anchors(18, [0.5], [1.0]), [[-3.5, 3, 20.5, 14]])


def test_shifted_anchors_are_ordered_h_w_anchor():
    anchors = np.array([[0, 0, 15, 15], [-8, -8, 23, 23]], dtype=np.float64)
    shifted = shifted_anchors(anchors, 2, 3, 16)
    assert shifted.shape == (12, 4)
    for h in range(2):
        for w in range(3):
            for a in range(2):
                np.testing.assert_array_equal(shifted[(h * 3 + w) * 2 + a], anchors[a] + [16 * w, 16 * h] * 2)

