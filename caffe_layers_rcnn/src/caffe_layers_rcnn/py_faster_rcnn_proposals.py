"""Region proposals from RPN outputs, step for step as py-faster-rcnn's ProposalLayer.forward (numpy)."""

from __future__ import annotations

import dataclasses

import numpy as np

from caffe_layers_rcnn.anchors import shifted_anchors
from caffe_layers_rcnn.boxes import bbox_transform_inv, clip_boxes, large_enough, nms


@dataclasses.dataclass(frozen=True)
class ProposalSettings:
    """What selects the proposals: feature stride, top-n before and after NMS, NMS threshold, minimum size.

    The defaults are py-faster-rcnn's cfg.TEST.RPN_* values with stride 16 (and inisis' proposal_param's).
    """

    feat_stride: int = 16
    pre_nms_topn: int = 6000
    post_nms_topn: int = 300
    nms_thresh: float | np.float32 = 0.7
    min_size: int = 16


def map_problem(score_shape: tuple[int, ...], delta_shape: tuple[int, ...], num_anchors: int) -> str | None:
    """What is wrong with 4-axis score and delta maps' shapes for num_anchors anchors per cell, or None."""
    if score_shape[0] != delta_shape[0]:
        return (f"bottoms 0 and 1 must have the same num, got shapes {list(score_shape)} and "
                f"{list(delta_shape)}")
    if score_shape[1] != 2 * num_anchors:
        return (f"bottom 0 (rpn_cls_prob_reshape) must have 2 x {num_anchors} anchors = {2 * num_anchors} "
                f"channels (background scores, then foreground scores), got shape {list(score_shape)}")
    if delta_shape[1] != 4 * num_anchors or delta_shape[2:] != score_shape[2:]:
        return (f"bottom 1 (rpn_bbox_pred) must have 4 x {num_anchors} channels and bottom 0's height and "
                f"width {list(score_shape[2:])}, got shape {list(delta_shape)}")
    return None


def bottom_problem(score_shape: tuple[int, ...], delta_shape: tuple[int, ...], info_count: int,
                   num_anchors: int) -> str | None:
    """What is wrong with the bottoms' shapes for py-faster-rcnn (one image) and num_anchors anchors."""
    if len(score_shape) != 4 or len(delta_shape) != 4:
        return f"bottoms 0 and 1 must have 4 axes, got shapes {list(score_shape)} and {list(delta_shape)}"
    problem = map_problem(score_shape, delta_shape, num_anchors)
    if problem:
        return problem
    if score_shape[0] != 1:
        return f"only single item batches are supported (py-faster-rcnn), got num {score_shape[0]}"
    if info_count < 3:
        return f"bottom 2 (im_info) must hold [height, width, scale], got {info_count} values"
    return None


def propose(scores_map: np.ndarray, deltas_map: np.ndarray, im_info: np.ndarray, anchors: np.ndarray,
            settings: ProposalSettings) -> tuple[np.ndarray, np.ndarray]:
    """rois (R, 5) [0, x1, y1, x2, y2] and their scores (R, 1), both float32, best first."""
    num_anchors = anchors.shape[0]
    height, width = scores_map.shape[-2:]
    # Channels [A, 2A) are the foreground probabilities; rows are ordered (h, w, anchor) as the anchors are.
    scores = scores_map[:, num_anchors:, :, :].transpose((0, 2, 3, 1)).reshape((-1, 1))
    deltas = deltas_map.transpose((0, 2, 3, 1)).reshape((-1, 4))
    proposals = bbox_transform_inv(shifted_anchors(anchors, height, width, settings.feat_stride), deltas)
    info = im_info.reshape(-1)
    proposals = clip_boxes(proposals, info[0], info[1])
    # The minimum size is given at the original image's scale, stored in im_info[2].
    keep = large_enough(proposals, np.float32(settings.min_size) * info[2])
    proposals, scores = proposals[keep, :], scores[keep]
    order = scores.ravel().argsort()[::-1]
    if settings.pre_nms_topn > 0:
        order = order[:settings.pre_nms_topn]
    proposals, scores = proposals[order, :], scores[order]
    keep = nms(proposals, scores.ravel(), settings.nms_thresh, settings.post_nms_topn)
    proposals, scores = proposals[keep, :], scores[keep]
    rois = np.hstack((np.zeros((proposals.shape[0], 1), dtype=np.float32), proposals.astype(np.float32)))
    return rois, scores.astype(np.float32)
