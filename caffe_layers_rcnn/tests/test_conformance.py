"""The core's conformance suite over every layer type of caffe-layers-rcnn: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.proto import caffe_pb2
from caffe_core.testing.conformance import Example, conformance_suite

RNG = np.random.default_rng(2)
ROIS = np.array([[0, 1, 1, 6, 5], [1, 0, 2, 3, 7], [0, 4, 4, 4, 4]], dtype=np.float32)
PROPOSAL_BOTTOMS = [RNG.random((2, 18, 4, 5)), RNG.normal(0, 0.2, (2, 36, 4, 5)),
                    np.array([[64.0, 80.0, 1.0]])]

TestConformance = conformance_suite("caffe-layers-rcnn", skip={}, examples={
    "Dropout": Example("dropout_param { dropout_ratio: 0.3 scale_train: false }"),
    "Proposal": Example("proposal_param { feat_stride: 16 min_size: 4 post_nms_topn: 10 "
                        "ratio: 0.5 ratio: 1 ratio: 2 scale: 2 scale: 4 scale: 8 }",
                        bottoms=PROPOSAL_BOTTOMS, tops=2, phase=caffe_pb2.TEST),
    "PSROIPooling": Example("psroi_pooling_param { spatial_scale: 0.5 output_dim: 2 group_size: 2 }",
                            bottoms=[(2, 8, 5, 6), ROIS]),
    "ROIPooling": Example("roi_pooling_param { pooled_h: 2 pooled_w: 3 spatial_scale: 0.5 }",
                          bottoms=[(2, 3, 5, 6), ROIS]),
    "SmoothL1Loss": Example("smooth_l1_loss_param { sigma: 3 }", bottoms=[(4, 8), (4, 8), (4, 8), (4, 8)]),
})
