"""The core's conformance suite over every layer type of caffe-layers-face: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.testing.conformance import Example, conformance_suite

RNG = np.random.default_rng(3)

TestConformance = conformance_suite("caffe-layers-face", skip={}, examples={
    # --- face_a: happynear's layers
    "Flip": Example("flip_param { flip_height: true }"),
    "Normalize": Example('normalize_param { normalize_type: "L2" bp_norm: true }', tops=2),
    "LabelSpecificAdd": Example("label_specific_add_param { bias: -0.35 }",
                                bottoms=[RNG.uniform(-1, 1, (4, 5)), np.array([0.0, 4.0, 2.0, 1.0])],
                                propagate_down=[True, False]),
    "ChannelScale": Example("", bottoms=[(2, 3, 4, 5), (2, 1, 4, 5)]),
    "InnerProduct": Example("inner_product_param { num_output: 3 normalize: true "
                            'weight_filler { type: "gaussian" } }'),
    # --- end face_a
})
