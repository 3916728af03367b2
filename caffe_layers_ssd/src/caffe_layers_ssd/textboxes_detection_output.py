"""TextBoxes++'s DetectionOutput (MhLiao/TextBoxes_plusplus): each row also carries a quadrilateral
(use_polygon, the default) or a rotated box; NMS runs on the horizontal boxes only."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd.bbox import CENTER_SIZE, F32
from caffe_layers_ssd.detection_output import ROW, DetectionOutputLayer
from caffe_layers_ssd.heads import num_priors

log = logging.getLogger("caffe.ssd")
QUAD_VALUES, RBOX_VALUES = 8, 5


def sets_denser_prior_boxes(layer: caffe_pb2.LayerParameter) -> bool:
    """Whether a PriorBox layer sets TextBoxes++'s denser_prior_boxes (False while no pack declares it)."""
    block = get_param_block(layer, "prior_box_param")
    declared = "denser_prior_boxes" in block.DESCRIPTOR.fields_by_name
    return declared and bool(block.HasField("denser_prior_boxes"))


def decode_quads(priors: np.ndarray, variances: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Quadrilaterals (..., 8) as x1, y1, ..., x4, y4 from offsets to the prior's corners (tl, tr, br, bl)."""
    p, var, q = (np.asarray(a, dtype=F32) for a in (priors, variances, offsets))
    width, height = p[..., 2] - p[..., 0], p[..., 3] - p[..., 1]
    corner_x = np.stack([p[..., 0], p[..., 2], p[..., 2], p[..., 0]], axis=-1)
    corner_y = np.stack([p[..., 1], p[..., 1], p[..., 3], p[..., 3]], axis=-1)
    x = var[..., 0, None] * q[..., 0::2] * width[..., None] + corner_x
    y = var[..., 1, None] * q[..., 1::2] * height[..., None] + corner_y
    return np.stack([x, y], axis=-1).reshape(*x.shape[:-1], QUAD_VALUES).astype(F32)


def decode_rboxes(priors: np.ndarray, variances: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Rotated boxes (..., 5) as x1, y1, x2, y2, h: two points from the prior's centre, h from its height."""
    p, var, r = (np.asarray(a, dtype=F32) for a in (priors, variances, offsets))
    width, height = p[..., 2] - p[..., 0], p[..., 3] - p[..., 1]
    centre_x, centre_y = (p[..., 0] + p[..., 2]) / F32(2), (p[..., 1] + p[..., 3]) / F32(2)
    x = var[..., 0, None] * r[..., 0:4:2] * width[..., None] + centre_x[..., None]
    y = var[..., 1, None] * r[..., 1:4:2] * height[..., None] + centre_y[..., None]
    # As the fork: the double exp of the float product, times the height, rounded to float once.
    with np.errstate(over="ignore"):
        h = (np.exp((var[..., 3] * r[..., 4]).astype(np.float64)) * height).astype(F32)
    return np.stack([x[..., 0], y[..., 0], x[..., 1], y[..., 1], h], axis=-1).astype(F32)


class TextBoxesDetectionOutputLayer(DetectionOutputLayer):
    """TextBoxes++'s rows: SSD's 7 values, then a quadrilateral x1, y1, .., x4, y4 (or x1, y1, x2, y2, h)."""

    suggests_textboxes = False

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers that set use_polygon, or any of a net one of whose PriorBoxes sets denser_prior_boxes."""
        return bool(get_param_block(param, "detection_output_param").HasField("use_polygon"))

    @classmethod
    def accepts_in_net(cls, param: caffe_pb2.LayerParameter,
                       net: Sequence[caffe_pb2.LayerParameter]) -> bool:
        """layers that set use_polygon, or of a net one of whose PriorBox layers sets denser_prior_boxes."""
        return cls.accepts(param) or any(layer.type == "PriorBox" and sets_denser_prior_boxes(layer)
                                         for layer in net)

    @staticmethod
    def runs_nms(param: Any) -> bool:
        """TextBoxes++ (weiliu89's SSD) always runs NMS, with nms_param's defaults when it is unset."""
        return True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """SSD's settings plus use_polygon (default true): 12 or 9 loc values per prior, 15 or 12 columns."""
        super().layer_setup(bottom, top)
        self.use_polygon = bool(get_param_block(self.layer_param, "detection_output_param").use_polygon)
        self.extra_values = QUAD_VALUES if self.use_polygon else RBOX_VALUES
        self.loc_values = 4 + self.extra_values
        self.row_width = ROW + self.extra_values
        self.decodes_extra = self.code_type == CENTER_SIZE and not self.variance_encoded_in_target
        if not self.decodes_extra:
            shape = "quadrilateral" if self.use_polygon else "rotated box"
            log.warning("%s: the fork decodes the %s only with code_type CENTER_SIZE and variances not "
                        "encoded in the target; its %d columns are written as 0 (the fork leaves them 0, or "
                        "uninitialised with variance_encoded_in_target)", self.describe(), shape,
                        self.extra_values)

    def check_heads(self, bottom: Sequence[Blob]) -> int:
        """The prior count, checked against 12 (use_polygon) or 9 loc values per prior."""
        return num_priors(self, bottom, self.num_loc_classes, self.num_classes, self.loc_values)

    def decoded(self, bottom: Sequence[Blob], num: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The horizontal boxes as SSD's, and each prior's quadrilateral or rotated box."""
        loc = bottom[0].cpu_data().reshape(num, self.num_priors, self.num_loc_classes, self.loc_values)
        priors, variances = self.prior_boxes(bottom)
        priors, variances = priors[None, :, None, :], variances[None, :, None, :]
        boxes = self.decode(priors, variances, loc[..., :4])
        if not self.decodes_extra:
            return boxes, np.zeros((*loc.shape[:-1], self.extra_values), dtype=F32)
        decode_extra = decode_quads if self.use_polygon else decode_rboxes
        return boxes, decode_extra(priors, variances, loc[..., 4:])
