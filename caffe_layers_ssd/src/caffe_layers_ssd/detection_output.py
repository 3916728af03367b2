"""DetectionOutput: decodes the offsets against the priors, NMS per class (if asked), top-k per image.

The forks' variants (RefineDet's, TextBoxes++'s) derive from `DetectionOutputLayer` and override its steps:
`check_heads` (the bottoms' sizes), `confidences` (the scores per prior and class), `decoded` (the boxes, and
any extra values a row carries), `runs_nms` (whether a layer without nms_param runs NMS) and `row_width`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd.bbox import F32, decode_boxes, split_priors
from caffe_layers_ssd.heads import num_priors
from caffe_layers_ssd.nms import nms_fast

log = logging.getLogger("caffe.ssd")
ROW = 7
TEXTBOXES_LOC_VALUES = (12, 9)


class DetectionOutputLayer(Layer):
    """Rows [image_id, label, score, xmin, ymin, xmax, ymax] of the detections kept, in a (1, 1, D, 7) top."""

    type = "DetectionOutput"
    min_bottom_blobs = 3
    max_bottom_blobs = 4
    exact_num_top_blobs = 1
    row_width = ROW
    # A loc head of 12 or 9 values per prior makes SSD's layer say how to choose TextBoxes++'s variant.
    suggests_textboxes = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads detection_output_param with the fork's checks; warns about what this port does not do."""
        param = get_param_block(self.layer_param, "detection_output_param")
        if not param.HasField("num_classes"):
            raise self.error("detection_output_param.num_classes must be given")
        self.num_classes = param.num_classes
        self.share_location = param.share_location
        self.num_loc_classes = 1 if self.share_location else self.num_classes
        self.background_label_id = param.background_label_id
        self.code_type = param.code_type
        self.variance_encoded_in_target = param.variance_encoded_in_target
        self.keep_top_k = param.keep_top_k
        self.confidence_threshold = float(F32(param.confidence_threshold)) if \
            param.HasField("confidence_threshold") else -float(np.finfo(F32).max)
        self.need_nms = self.runs_nms(param)
        if self.need_nms:
            nms = param.nms_param
            self.nms_threshold, self.eta = nms.nms_threshold, nms.eta
            if self.nms_threshold < 0:
                raise self.error(f"nms_param.nms_threshold must be non negative, got {self.nms_threshold:g}")
            if not 0 < self.eta <= 1:
                raise self.error(f"nms_param.eta must be in (0, 1], got {self.eta:g}")
            self.top_k = nms.top_k if nms.HasField("top_k") else -1
        if param.save_output_param.output_directory:
            log.warning("%s: save_output_param names the output directory '%s'; this port neither clears, "
                        "creates nor writes to it (the detections stay in the top)", self.describe(),
                        param.save_output_param.output_directory)
        if param.visualize:
            log.warning("%s: visualize: true is not supported (no OpenCV display); it is ignored",
                        self.describe())

    @staticmethod
    def runs_nms(param: Any) -> bool:
        """As inisis/caffe: without nms_param there is no NMS (and no confidence threshold) at all."""
        return bool(param.HasField("nms_param"))

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the head sizes against the priors; the top is (1, 1, 1, width) until forward counts rows."""
        if bottom[0].num != bottom[1].num:
            raise self.error(f"loc (bottom 0, shape {bottom[0].shape}) and conf (bottom 1, shape "
                             f"{bottom[1].shape}) must have the same number of images")
        self.num_priors = self.check_heads(bottom)
        top[0].reshape((1, 1, 1, self.row_width))

    def check_heads(self, bottom: Sequence[Blob]) -> int:
        """The prior count, checked against 4 loc values per prior; 12 or 9 name TextBoxes++'s variant."""
        count = bottom[2].height // 4
        for values in TEXTBOXES_LOC_VALUES if self.suggests_textboxes else ():
            if count and bottom[0].channels == count * self.num_loc_classes * values:
                raise self.error(
                    f"loc (bottom 0, shape {bottom[0].shape}) holds {values} location values per prior "
                    f"({count} priors x {self.num_loc_classes} location classes), SSD's layer expects 4 "
                    f"(channels {count * self.num_loc_classes * 4}): this looks like a TextBoxes++ net "
                    f"({'use_polygon: true' if values == 12 else 'use_polygon: false'}). Set use_polygon in "
                    "detection_output_param, or choose TextBoxes++'s layer with caffe_core.registry."
                    "prefer_provider('DetectionOutput', 'caffe-layers-ssd[textboxes]') or "
                    "CAFFE_LAYER_PROVIDERS='DetectionOutput=caffe-layers-ssd[textboxes]'")
        return num_priors(self, bottom, self.num_loc_classes, self.num_classes)

    def confidences(self, bottom: Sequence[Blob], num: int) -> np.ndarray:
        """GetConfidenceScores: conf (bottom 1) as (images, priors, classes)."""
        return bottom[1].cpu_data().reshape(num, self.num_priors, self.num_classes)

    def prior_boxes(self, bottom: Sequence[Blob]) -> tuple[np.ndarray, np.ndarray]:
        """The priors (P, 4) and their variances (P, 4) of bottom 2."""
        return split_priors(bottom[2].cpu_data(), self.num_priors)

    def decoded(self, bottom: Sequence[Blob], num: int) -> tuple[np.ndarray, np.ndarray | None]:
        """DecodeBBoxesAll: boxes (N, P, loc classes, 4) and extra values (N, P, loc classes, E), or None."""
        loc = bottom[0].cpu_data().reshape(num, self.num_priors, self.num_loc_classes, 4)
        priors, variances = self.prior_boxes(bottom)
        return self.decode(priors[None, :, None, :], variances[None, :, None, :], loc), None

    def decode(self, priors: np.ndarray, variances: np.ndarray, loc: np.ndarray) -> np.ndarray:
        """DecodeBBox with the layer's code type and variance setting."""
        return decode_boxes(priors, variances, self.code_type, self.variance_encoded_in_target, loc)

    # The fork runs NMS and the top-k selection on the host, on CPU and GPU alike; GPU mode falls back here.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Decodes, runs NMS (if nms_param) per image and class, keeps keep_top_k per image, writes rows."""
        num = bottom[0].num
        conf = self.confidences(bottom, num)
        boxes, extra = self.decoded(bottom, num)
        image, label, prior, score = self.detections(boxes, conf, num)
        if image.size == 0:
            log.info("%s: couldn't find any detections", self.describe())
            top[0].reshape((1, 1, num, self.row_width))
            out = top[0].mutable_cpu_data().reshape(num, self.row_width)
            out[...] = -1
            out[:, 0] = np.arange(num)
            return
        top[0].reshape((1, 1, image.size, self.row_width))
        out = top[0].mutable_cpu_data().reshape(image.size, self.row_width)
        out[:, 0] = image
        out[:, 1] = label
        out[:, 2] = score
        loc_column = np.zeros_like(label) if self.share_location else label
        out[:, 3:ROW] = boxes[image, prior, loc_column]
        if extra is not None:
            out[:, ROW:] = extra[image, prior, loc_column]

    def detections(self, boxes: np.ndarray, conf: np.ndarray, num: int) -> tuple[Array, Array, Array, Array]:
        """(image, label, prior, score) of every detection kept, in the fork's row order."""
        priors_count = self.num_priors
        labels = np.arange(self.num_classes)
        labels = labels[labels != self.background_label_id]
        # One NMS group per (image, label): its scores and its boxes (the shared ones, or the label's own).
        scores = conf[:, :, labels].transpose(0, 2, 1).reshape(-1, priors_count)
        loc_columns = np.zeros_like(labels) if self.share_location else labels
        group_boxes = boxes[:, :, loc_columns].transpose(0, 2, 1, 3).reshape(-1, priors_count, 4)
        if self.need_nms:
            order, kept = nms_fast(group_boxes, scores, self.confidence_threshold, self.nms_threshold,
                                   self.eta, self.top_k)
        else:
            order = np.broadcast_to(np.arange(priors_count), scores.shape)
            kept = np.ones(scores.shape, dtype=bool)
        group, rank = np.nonzero(kept)
        image, label = np.divmod(group, max(len(labels), 1))
        label = labels[label] if len(labels) else label
        prior = order[group, rank]
        score = scores[group, prior]
        keep, cut = self._top_k_per_image(image, label, rank, score, num)
        image, label, rank, prior, score = image[keep], label[keep], rank[keep], prior[keep], score[keep]
        # An image cut to keep_top_k lists each label's boxes by score (the fork rebuilds them from its
        # score sort); the others keep the NMS order, or the prior order without NMS.
        rows = np.lexsort((rank, np.where(cut[image], -score, 0), label, image))
        return image[rows], label[rows], prior[rows], score[rows]

    def _top_k_per_image(self, image: np.ndarray, label: np.ndarray, rank: np.ndarray, score: np.ndarray,
                         num: int) -> tuple[Array, Array]:
        """(detections kept, images cut): all of an image with at most keep_top_k, else its best."""
        counts = np.bincount(image, minlength=num)
        if self.keep_top_k <= -1 or image.size == 0:
            return np.ones(image.size, dtype=bool), np.zeros(num, dtype=bool)
        # The fork's sort is unstable; ties go to the lower label, then to the NMS (or prior) order.
        by_score = np.lexsort((rank, label, -score, image))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        position = np.empty(image.size, dtype=np.int64)
        position[by_score] = np.arange(image.size) - starts[image[by_score]]
        cut = counts > self.keep_top_k
        return ~cut[image] | (position < self.keep_top_k), cut
