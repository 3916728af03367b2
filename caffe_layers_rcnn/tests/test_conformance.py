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

BOX_GROUP_BOTTOMS = [RNG.random((4, 2, 3, 4)), RNG.normal(0, 0.5, (4, 4, 3, 4))]

TestConformance = conformance_suite("caffe-layers-rcnn", skip={}, examples={
    "BoxGroupOutput": Example("box_group_output_param { min_size: 2 box_group_param { field_w: 8 field_h: 8 "
                              "field_w: 12 field_h: 6 stride: 4 } }", bottoms=BOX_GROUP_BOTTOMS, tops=2,
                              phase=caffe_pb2.TEST),
    "DecodeBBox": Example("bbox_reg_param { bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 bbox_mean: 0 "
                          "bbox_std: 0.1 bbox_std: 0.1 bbox_std: 0.2 bbox_std: 0.2 }", bottoms=[(3, 8), ROIS],
                          phase=caffe_pb2.TEST),
    "ROIAlign": Example("roi_pooling_param { pooled_h: 2 pooled_w: 3 spatial_scale: 0.5 pad_ratio: 0.1 }",
                        bottoms=[(2, 3, 5, 6), ROIS]),
    "ScaleRoute": Example("scale_route_param { low_scale: 2 high_scale: 8 }", bottoms=[ROIS, (3, 2, 2, 2)],
                          tops=2, phase=caffe_pb2.TEST),
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
