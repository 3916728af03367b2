"""RefineDet's DetectionOutput (sfzhang15/RefineDet): the ARM's objectness filters the ODM's scores and, with
a fifth bottom, the ARM's offsets refine the priors the ODM's offsets are decoded against."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd.bbox import F32
from caffe_layers_ssd.detection_output import DetectionOutputLayer

ARM_CONF, ARM_LOC = 3, 4


class RefineDetDetectionOutputLayer(DetectionOutputLayer):
    """SSD's DetectionOutput over odm_loc, odm_conf, priors, arm_conf (objectness) and arm_loc (cascade)."""

    max_bottom_blobs = 5
    suggests_textboxes = False

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers with 5 bottoms, or 4 without visualize (SSD's 4th bottom is the image it draws on)."""
        if len(param.bottom) == 5:
            return True
        return len(param.bottom) == 4 and not get_param_block(param, "detection_output_param").visualize

    @staticmethod
    def runs_nms(param: Any) -> bool:
        """RefineDet (weiliu89's SSD) always runs NMS, with nms_param's defaults when it is unset."""
        return True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """SSD's settings plus objectness_score; the cascade needs shared locations, as the fork's decode."""
        super().layer_setup(bottom, top)
        param = get_param_block(self.layer_param, "detection_output_param")
        self.objectness_score = F32(param.objectness_score)
        if len(bottom) > ARM_LOC and not self.share_location:
            raise self.error("with 5 bottoms (arm_loc, bottom 4) share_location must be true: RefineDet's "
                             "cascaded decoding reads the ARM's offsets as one shared box per prior")

    def check_heads(self, bottom: Sequence[Blob]) -> int:
        """SSD's checks, plus arm_conf (N, P * 2) and arm_loc (N, P * 4) against the priors."""
        count = super().check_heads(bottom)
        num = bottom[0].num
        for index, (name, values) in enumerate((("arm_conf", 2), ("arm_loc", 4)), start=ARM_CONF):
            if index >= len(bottom):
                break
            blob = bottom[index]
            if blob.num_axes < 1 or blob.shape[0] != num or blob.count != num * count * values:
                raise self.error(f"{name} (bottom {index}, shape {blob.shape}) must hold {values} values per "
                                 f"prior for each image: expected shape ({num}, {count * values}) for {num} "
                                 f"images and {count} priors")
        return count

    def confidences(self, bottom: Sequence[Blob], num: int) -> np.ndarray:
        """OSGetConfidenceScores: a prior whose objectness is below objectness_score scores 1 for class 0
        (class 0 whatever background_label_id says, as the fork) and 0 for the others."""
        conf = super().confidences(bottom, num)
        objectness = bottom[ARM_CONF].cpu_data().reshape(num, self.num_priors, 2)[:, :, 1]
        filtered_scores = np.zeros(self.num_classes, dtype=F32)
        filtered_scores[0] = 1
        return np.where((objectness < self.objectness_score)[..., None], filtered_scores, conf).astype(F32)

    def decoded(self, bottom: Sequence[Blob], num: int) -> tuple[np.ndarray, np.ndarray | None]:
        """CasRegDecodeBBoxesAll: priors refined by arm_loc, odm_loc decoded against them (5 bottoms)."""
        if len(bottom) <= ARM_LOC:
            return super().decoded(bottom, num)
        priors, variances = self.prior_boxes(bottom)
        variances = variances[None, :, None, :]
        arm_loc = bottom[ARM_LOC].cpu_data().reshape(num, self.num_priors, 1, 4)
        refined = self.decode(priors[None, :, None, :], variances, arm_loc)
        loc = bottom[0].cpu_data().reshape(num, self.num_priors, self.num_loc_classes, 4)
        # The refined anchors keep the priors' own variances; nothing is clipped or checked.
        return self.decode(refined, variances, loc), None
