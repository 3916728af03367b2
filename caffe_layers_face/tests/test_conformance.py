"""The core's conformance suite over every layer type of caffe-layers-face: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.testing.conformance import Example, conformance_suite

RNG = np.random.default_rng(3)
LABELS = np.array([0, 2, 1, 2], np.float32)

TestConformance = conformance_suite("caffe-layers-face", skip={}, examples={
    # MarginInnerProduct (SphereFace)
    "MarginInnerProduct": Example("margin_inner_product_param { num_output: 3 type: QUADRUPLE "
                                  'weight_filler { type: "gaussian" } }',
                                  bottoms=[RNG.normal(size=(4, 5)), LABELS], tops=2),
    # CenterLoss (caffe-face)
    "CenterLoss": Example('center_loss_param { num_output: 3 center_filler { type: "gaussian" } }',
                          bottoms=[RNG.normal(size=(4, 5)), LABELS]),
    # CosinAddm and CombinedMargin (arcface-caffe)
    "CosinAddm": Example("cosin_add_m_param { m: 0.5 }", bottoms=[RNG.uniform(-0.9, 0.9, (4, 3)), LABELS]),
    "CombinedMargin": Example("combined_margin_param { m1: 1 m2: 0.3 m3: 0.2 }",
                              bottoms=[RNG.uniform(-0.9, 0.9, (4, 3)), LABELS]),
    # AdaCosAddmScale and NormL2 (arcface-caffe's AdaCos)
    "AdaCosAddmScale": Example("adacos_add_m_scale_param { m: 0.5 num_classes: 3 }",
                               bottoms=[RNG.uniform(-0.9, 0.9, (4, 3)), LABELS]),
    "NormL2": Example("", bottoms=[(2, 3, 4, 5)]),
    # happynear's layers
    "Flip": Example("flip_param { flip_height: true }"),
    "Normalize": Example('normalize_param { normalize_type: "L2" bp_norm: true }', tops=2),
    "LabelSpecificAdd": Example("label_specific_add_param { bias: -0.35 }",
                                bottoms=[RNG.uniform(-1, 1, (4, 5)), np.array([0.0, 4.0, 2.0, 1.0])],
                                propagate_down=[True, False]),
    "ChannelScale": Example("", bottoms=[(2, 3, 4, 5), (2, 1, 4, 5)]),
    "InnerProduct": Example("inner_product_param { num_output: 3 normalize: true "
                            'weight_filler { type: "gaussian" } }'),
})
