"""YoloDetectionOutput (eric612/MobileNet-YOLO, YOLOv2): decodes one or two square region heads, one candidate
per cell and anchor (its best softmax class), class-agnostic NMS, rows [0, label, score, box]."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_yolo.yolo_boxes import F32, ROW, Candidates, anchor_size, detection_output, sigmoid

log = logging.getLogger("caffe.yolo")
BOX_VALUES = 5  # tx, ty, tw, th, objectness before the class logits
USED_BOTTOMS = 2  # the fork decodes bottom 0 and, when present, bottom 1; later ones are ignored


def softmax_best(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first best class, its probability) of the fork's float softmax over the last axis."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exps = np.exp(shifted.astype(np.float64)).astype(F32)
    # The fork sums in class order, in float.
    total = np.cumsum(exps, axis=-1, dtype=F32)[..., -1:]
    probabilities = exps / total
    best = np.argmax(probabilities, axis=-1)
    return best, np.take_along_axis(probabilities, best[..., None], axis=-1)[..., 0]


class YoloDetectionOutputLayer(Layer):
    """YOLOv2 detections of bottom 0 (and bottom 1, a second scale) in a (1, 1, K, 7) top."""

    type = "YoloDetectionOutput"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {i: 4 for i in range(USED_BOTTOMS)}  # each decoded head is (N, C, H, W)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads yolo_detection_output_param with the fork's checks."""
        param = get_param_block(self.layer_param, "yolo_detection_output_param")
        where = "yolo_detection_output_param"
        if not param.HasField("num_classes"):
            raise self.error(f"{where}.num_classes must be given (the fork CHECKs it)")
        self.num_classes = int(param.num_classes)
        self.num_box = int(param.num_box)
        if self.num_box == 0:
            raise self.error(f"{where}.num_box must be positive")
        if len(param.biases) < 2 * self.num_box:
            raise self.error(f"{where}.biases needs a (w, h) pair per box: {2 * self.num_box} values for "
                             f"num_box {self.num_box}, got {len(param.biases)}")
        self.anchors = np.asarray(param.biases, dtype=F32)[:2 * self.num_box].reshape(self.num_box, 2)
        self.confidence_threshold = F32(param.confidence_threshold)
        self.nms_threshold = F32(param.nms_threshold)
        if param.label_map_file:
            log.info("%s: label_map_file '%s' only names labels in the fork's logs; it is not read",
                     self.describe(), param.label_map_file)
        if len(bottom) > USED_BOTTOMS:
            log.warning("%s: the fork decodes bottoms 0 and 1 only; bottoms %s are ignored", self.describe(),
                        list(self.layer_param.bottom[USED_BOTTOMS:]))

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the decoded heads; the top is (1, 1, 1, 7) until forward counts detections."""
        length = BOX_VALUES + self.num_classes
        for t, blob in enumerate(bottom[:USED_BOTTOMS]):
            name = f"bottom {t} ({self.layer_param.bottom[t]}, shape {list(blob.shape)})"
            if blob.channels != self.num_box * length:
                raise self.error(f"{name} must have num_box x (5 + num_classes) = {self.num_box} x {length} "
                                 f"= {self.num_box * length} channels")
            if blob.height != blob.width:
                raise self.error(f"{name} must be square: the fork takes the side from the width and walks "
                                 f"side x side cells")
        top[0].reshape((1, 1, 1, ROW))

    def _head_candidates(self, data: np.ndarray, image_offset: int) -> tuple[Candidates, np.ndarray]:
        """One head's candidates in the fork's order (image, row, column, anchor) and their source ids."""
        num, _, side, _ = data.shape
        values = data.reshape(num, self.num_box, BOX_VALUES + self.num_classes, side, side)
        values = values.transpose(0, 3, 4, 1, 2)
        col = np.arange(side, dtype=F32)[None, None, :, None]
        row = np.arange(side, dtype=F32)[None, :, None, None]
        x = (col + sigmoid(values[..., 0])) / F32(side)
        y = (row + sigmoid(values[..., 1])) / F32(side)
        w = anchor_size(values[..., 2], self.anchors[:, 0], side)
        h = anchor_size(values[..., 3], self.anchors[:, 1], side)
        label, probability = softmax_best(values[..., BOX_VALUES:])
        confidence = sigmoid(values[..., 4]) * probability
        keep = confidence >= self.confidence_threshold
        source = np.flatnonzero(keep) + image_offset
        return Candidates(x[keep], y[keep], w[keep], h[keep], label[keep], confidence[keep]), source

    # The fork has no GPU code for this layer: GPU mode reads the heads back once and runs this.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Candidates of bottom 0 then bottom 1, sorted by confidence, greedy NMS, one row each."""
        parts, sources, offset = [], [], 0
        for blob in bottom[:USED_BOTTOMS]:
            part, source = self._head_candidates(blob.cpu_data(), offset)
            parts.append(part)
            sources.append(source)
            offset += blob.count // (BOX_VALUES + self.num_classes)
        rows = detection_output(Candidates.concatenate(parts), np.concatenate(sources),
                                float(self.nms_threshold), bottom[0].num)
        top[0].reshape((1, 1, rows.shape[0], ROW))
        top[0].mutable_cpu_data()[...] = rows.reshape(top[0].shape)
