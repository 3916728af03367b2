"""Proposal: the region proposal layer of inisis/caffe's C++ proposal_layer.cpp (PVANet's caffe-fast-rcnn)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_rcnn.inisis_proposals import inisis_anchors, inisis_bottom_problem, inisis_propose
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings


class ProposalLayer(Layer):
    """Bottoms scores (N, 2A, H, W), deltas (N, 4A, H, W), im_info; tops rois (R, 5) and scores (R,)."""

    type = "Proposal"
    exact_num_bottom_blobs = 3
    min_top_blobs = 1
    max_top_blobs = 2
    bottom_num_axes = {0: 4, 1: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Makes the fork's anchors from proposal_param's ratios and scales and reads the limits."""
        param = get_param_block(self.layer_param, "proposal_param")
        for name in ("feat_stride", "base_size", "pre_nms_topn", "post_nms_topn"):
            if getattr(param, name) == 0:
                raise self.error(f"proposal_param.{name} must be > 0")
        for name in ("ratio", "scale"):
            values = list(getattr(param, name))
            if not values:
                raise self.error(f"proposal_param.{name} is empty: give at least one (the C++ Proposal layer "
                                 f"has no default {name}s and would make no anchors, hence no proposals)")
            if any(v <= 0 for v in values):
                raise self.error(f"proposal_param.{name} values must be > 0, got {values}")
        self.anchors = inisis_anchors(param.base_size, param.ratio, param.scale)
        self.settings = ProposalSettings(param.feat_stride, param.pre_nms_topn, param.post_nms_topn,
                                         np.float32(param.nms_thresh), param.min_size)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the bottoms; as the fork, room for post_nms_topn rois per item until forward counts them."""
        problem = inisis_bottom_problem(bottom[0].shape, bottom[1].shape, bottom[2].count,
                                        self.anchors.shape[0])
        if problem:
            raise self.error(problem)
        rows = bottom[0].shape[0] * self.settings.post_nms_topn
        top[0].reshape((rows, 5))
        if len(top) > 1:
            top[1].reshape((rows,))

    # On the host, as the fork's Forward_cpu (and its GPU path, which sorts on the host): sorting and the
    # greedy NMS are sequential and data-dependent.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Decodes, clips and scores every item's boxes, sorts and suppresses them into rois and scores."""
        rois, scores = inisis_propose(bottom[0].cpu_data(), bottom[1].cpu_data(), bottom[2].cpu_data(),
                                      self.anchors, self.settings)
        top[0].reshape(rois.shape)
        top[0].mutable_cpu_data()[...] = rois
        if len(top) > 1:
            top[1].reshape(scores.shape)
            top[1].mutable_cpu_data()[...] = scores
