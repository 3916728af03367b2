"""Yolov3DetectionOutput (eric612/MobileNet-YOLO): decodes YOLOv3 heads, one candidate per class above the
threshold, class-agnostic NMS over all heads and images, rows [0, label, score, xmin, ymin, xmax, ymax]."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import EVERY_BOTTOM, Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_yolo.yolo_boxes import (
    F32,
    ROW,
    Candidates,
    anchor_size,
    detection_output,
    sigmoid,
)

BOX_VALUES = 5  # tx, ty, tw, th, objectness before the class logits


class Yolov3DetectionOutputLayer(Layer):
    """YOLOv3 detections of every head (one bottom per mask group) in a (1, 1, K, 7) top."""

    type = "Yolov3DetectionOutput"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {EVERY_BOTTOM: 4}  # every head is (N, C, H, W)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads yolov3_detection_output_param with the fork's checks, and the anchors each head uses."""
        param = get_param_block(self.layer_param, "yolov3_detection_output_param")
        where = "yolov3_detection_output_param"
        if not param.HasField("num_classes"):
            raise self.error(f"{where}.num_classes must be given (the fork CHECKs it)")
        if param.gaussian_box:
            raise self.error(
                f"{where}.gaussian_box: true (Gaussian YOLOv3) is not supported: the fork's own gaussian "
                "path is broken on both sides (on CPU the class scores are shifted by one channel and the "
                "objectness is read from a channel never written; on GPU sigma_x is subtracted twice), so "
                "there are no fork numbers to reproduce")
        self.num_classes = int(param.num_classes)
        self.num_box = int(param.num_box)
        self.confidence_threshold = F32(param.confidence_threshold)
        self.nms_threshold = F32(param.nms_threshold)
        biases = np.asarray(param.biases, dtype=F32)
        mask = np.asarray(param.mask, dtype=np.int64)
        scales = list(param.anchors_scale)
        heads = int(param.mask_group_num)
        if len(bottom) != heads:
            raise self.error(f"{where}.mask_group_num ({heads}) must equal the number of bottoms "
                             f"({len(bottom)})")
        if len(scales) < heads:
            raise self.error(f"{where}.anchors_scale needs one stride per bottom ({heads}), got "
                             f"{len(scales)}")
        if any(s == 0 for s in scales[:heads]):
            raise self.error(f"{where}.anchors_scale must be positive, got {scales}")
        per_head = len(mask) // heads
        if self.num_box == 0 or self.num_box > per_head:
            raise self.error(f"{where}.num_box ({self.num_box}) must be between 1 and the anchors per head, "
                             f"len(mask) / mask_group_num = {len(mask)} / {heads} = {per_head}")
        used = np.concatenate([mask[t * per_head:t * per_head + self.num_box] for t in range(heads)])
        if used.size and 2 * int(used.max()) + 1 >= biases.size:
            raise self.error(f"{where}.mask uses anchor {int(used.max())}, but biases holds "
                             f"{biases.size // 2} (w, h) pairs")
        self.strides = scales[:heads]
        # Anchor (w, h) in input pixels for each head and box: shape (heads, num_box, 2).
        pairs = biases[:biases.size // 2 * 2].reshape(-1, 2)
        self.anchors = pairs[used].reshape(heads, self.num_box, 2)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks each head's channels and batch; the top is (1, 1, 1, 7) until forward counts detections."""
        length = BOX_VALUES + self.num_classes
        for t, blob in enumerate(bottom):
            if blob.channels != self.num_box * length:
                raise self.error(f"bottom {t} ({self.layer_param.bottom[t]}, shape {list(blob.shape)}) must "
                                 f"have num_box x (5 + num_classes) = {self.num_box} x {length} = "
                                 f"{self.num_box * length} channels")
            if blob.num != bottom[0].num:
                raise self.error(f"every bottom must have the same number of images: bottom {t} has "
                                 f"{blob.num}, bottom 0 {bottom[0].num}")
        top[0].reshape((1, 1, 1, ROW))

    def _head_candidates(self, t: int, data: np.ndarray, image_offset: int) -> tuple[Candidates, np.ndarray]:
        """One head's candidates in the fork's order (image, cell, anchor, class) and their source ids."""
        num, _, height, width = data.shape
        heads = data.reshape(num, self.num_box, BOX_VALUES + self.num_classes, height, width)
        # (image, row, column, anchor, value): the fork's loop order over cells, then anchors.
        values = heads.transpose(0, 3, 4, 1, 2)
        stride = self.strides[t]
        col = np.arange(width, dtype=F32)[None, None, :, None]
        row = np.arange(height, dtype=F32)[None, :, None, None]
        x = (col + sigmoid(values[..., 0])) / F32(width)
        y = (row + sigmoid(values[..., 1])) / F32(height)
        anchors = self.anchors[t]
        w = anchor_size(values[..., 2], anchors[:, 0], width * stride)
        h = anchor_size(values[..., 3], anchors[:, 1], height * stride)
        scores = sigmoid(values[..., BOX_VALUES:]) * sigmoid(values[..., 4])[..., None]
        keep = scores > self.confidence_threshold
        cell = np.nonzero(keep)[:4]
        source = np.ravel_multi_index(cell, keep.shape[:4]) + image_offset
        return Candidates(x[cell], y[cell], w[cell], h[cell], np.nonzero(keep)[4],
                          scores[keep].astype(F32)), source

    # As in the fork, the boxes are sorted and suppressed on the host; GPU mode reads the heads back once.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Candidates of every head, sorted by score, the fork's greedy class-agnostic NMS, one row each."""
        parts, sources, offset = [], [], 0
        for t, blob in enumerate(bottom):
            part, source = self._head_candidates(t, blob.cpu_data(), offset)
            parts.append(part)
            sources.append(source)
            offset += blob.count // (BOX_VALUES + self.num_classes)
        source = np.concatenate(sources) if sources else np.zeros(0, dtype=np.int64)
        rows = detection_output(Candidates.concatenate(parts), source, float(self.nms_threshold),
                                bottom[0].num)
        top[0].reshape((1, 1, rows.shape[0], ROW))
        top[0].mutable_cpu_data()[...] = rows.reshape(top[0].shape)
