"""DetectionEvaluate: marks each detection true or false positive against the ground truth, for mAP tools."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd.bbox import F32, box_size, jaccard_overlap, output_boxes, scale_boxes
from caffe_layers_ssd.name_size import read_name_sizes
from caffe_layers_ssd.params import signed_label

DET_ROW, GT_ROW, OUT_ROW = 7, 8, 5


class DetectionEvaluateLayer(Layer):
    """Rows [-1, label, num_positives, -1, -1] per class, then [image, label, score, tp, fp] per detection."""

    type = "DetectionEvaluate"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (0, 4), 1: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads detection_evaluate_param and the image sizes of name_size_file."""
        p = get_param_block(self.layer_param, "detection_evaluate_param")
        if not p.HasField("num_classes"):
            raise self.error("detection_evaluate_param.num_classes must be given")
        self.num_classes = p.num_classes
        self.background_label_id = signed_label(p.background_label_id)
        if self.background_label_id >= self.num_classes:
            raise self.error(f"detection_evaluate_param.background_label_id {self.background_label_id} "
                             f"must be below num_classes {self.num_classes} (or -1 for no background)")
        self.overlap_threshold = F32(p.overlap_threshold)
        if self.overlap_threshold <= 0:
            raise self.error(f"detection_evaluate_param.overlap_threshold must be positive, got "
                             f"{p.overlap_threshold:g}")
        self.evaluate_difficult_gt = p.evaluate_difficult_gt
        self.sizes = np.zeros((0, 2), dtype=np.int64)
        if p.HasField("name_size_file"):
            try:
                entries = read_name_sizes(p.name_size_file)
            except OSError as err:
                raise self.error(f"Failed to open name size file (detection_evaluate_param.name_size_file) "
                                 f"'{p.name_size_file}': {err}") from err
            self.sizes = np.array([(h, w) for _, h, w in entries], dtype=np.int64).reshape(-1, 2)
        # resize_param exists in the ssd branch only (OutputBBox); without it boxes are scaled as inisis does.
        self.resize_param = p.resize_param if p.HasField("resize_param") else None
        self.count = 0

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (1, 1, classes without background + detection rows, 5), as inisis sizes it."""
        for blob, width, what in ((bottom[0], DET_ROW, "detections"), (bottom[1], GT_ROW, "ground truth")):
            if (blob.num, blob.channels, blob.width) != (1, 1, width):
                raise self.error(f"{what} must be (1, 1, rows, {width}), got shape {list(blob.shape)}")
        num_pos_classes = self.num_classes - (self.background_label_id != -1)
        top[0].reshape((1, 1, num_pos_classes + bottom[0].height, OUT_ROW))

    # The fork evaluates on the host only (no GPU code); GPU mode falls back here.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Writes class counts, then each detection's status by image and label; item -1 rows leave zeros."""
        out = top[0].mutable_cpu_data().reshape(-1, OUT_ROW)
        out[...] = 0
        det = bottom[0].cpu_data().reshape(-1, DET_ROW)
        truth = self._ground_truth(bottom[1].cpu_data().reshape(-1, GT_ROW))
        gt_item, gt_label, gt_boxes, gt_difficult = truth
        header = [c for c in range(self.num_classes) if c != self.background_label_id]
        counted = gt_label if self.evaluate_difficult_gt else gt_label[~gt_difficult]
        out[: len(header), 0] = -1
        out[: len(header), 1] = header
        out[: len(header), 2] = (counted[None, :] == np.array(header)[:, None]).sum(axis=1)
        out[: len(header), 3:] = -1
        item, label = det[:, 0].astype(np.int64), det[:, 1].astype(np.int64)
        listed = item != -1
        if (listed & (label == self.background_label_id)).any():
            raise self.error(f"Found background label {self.background_label_id} in the detection results")
        images = np.unique(item[listed])
        # Label -1 rows (DetectionOutput's "no detection") are evaluated like any label, as inisis does.
        item, label, score, boxes = item[listed], label[listed], det[listed, 2], det[listed, 3:]
        same = (item[:, None] == gt_item[None, :]) & (label[:, None] == gt_label[None, :])
        has_gt = same.any(axis=1)
        tp, fp = self._status(item, label, score, boxes, gt_item, gt_boxes, gt_difficult, same, images)
        # Groups with ground truth are sorted by score; the others keep their input order.
        order = np.lexsort((np.arange(item.size), np.where(has_gt, -score, 0), label, item))
        written = np.stack([item, label, score, tp, fp], axis=1)[order]
        out[len(header): len(header) + len(written)] = written
        if len(self.sizes):
            self.count = (self.count + len(images)) % len(self.sizes)

    def _ground_truth(self, rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """GetGroundTruth (label-grouped form): rows up to the first item id -1; background labels refused."""
        item = rows[:, 0].astype(np.int64)
        end = int(np.argmax(item == -1)) if (item == -1).any() else len(item)
        rows, item = rows[:end], item[:end]
        label = rows[:, 1].astype(np.int64)
        if (label == self.background_label_id).any():
            raise self.error(f"Found background label {self.background_label_id} in the ground truth")
        return item, label, rows[:, 3:7], rows[:, 7] != 0

    def _status(self, item: np.ndarray, label: np.ndarray, score: np.ndarray, boxes: np.ndarray,
                gt_item: np.ndarray, gt_boxes: np.ndarray, gt_difficult: np.ndarray, same: np.ndarray,
                images: np.ndarray) -> tuple[Array, Array]:
        """(true positive, false positive) of each detection, matched greedily in score order per group."""
        if item.size == 0 or gt_item.size == 0:
            return np.zeros(item.size, dtype=F32), np.ones(item.size, dtype=F32)
        normalized = len(self.sizes) == 0
        if normalized:
            det_boxes, det_sizes, truth, truth_sizes = boxes, box_size(boxes), gt_boxes, box_size(gt_boxes)
        else:
            # Each image listed in the detections takes the next entry of name_size_file, in image order.
            image_sizes = self.sizes[(self.count + np.arange(len(images))) % len(self.sizes)]
            det_hw = image_sizes[np.searchsorted(images, item)]
            # Ground truth of an image without detections is never compared; it takes a placeholder size.
            at = np.minimum(np.searchsorted(images, gt_item), len(images) - 1)
            gt_hw = np.where((images[at] == gt_item)[:, None], image_sizes[at], 1)
            if self.resize_param is None:
                # inisis' ScaleBBox: no clipping to the image first (the ssd branch's OutputBBox clips).
                det_boxes, det_sizes = scale_boxes(boxes, det_hw[:, 0], det_hw[:, 1])
                truth, truth_sizes = scale_boxes(gt_boxes, gt_hw[:, 0], gt_hw[:, 1])
            else:
                det_boxes, det_sizes = output_boxes(boxes, det_hw[:, 0], det_hw[:, 1], self.resize_param)
                truth, truth_sizes = output_boxes(gt_boxes, gt_hw[:, 0], gt_hw[:, 1], self.resize_param)
        overlap = jaccard_overlap(det_boxes[:, None], truth[None], det_sizes[:, None], truth_sizes[None],
                                  normalized)
        overlap = np.where(same, overlap, -np.inf)
        has_gt = same.any(axis=1)
        best = np.argmax(overlap, axis=1)
        best_overlap = np.take_along_axis(overlap, best[:, None], axis=1)[:, 0]
        above = has_gt & (best_overlap >= self.overlap_threshold)
        counts = above & (self.evaluate_difficult_gt | ~gt_difficult[best])
        # A ground-truth box goes to the first counting detection (in score order) that picks it.
        order = np.lexsort((np.arange(item.size), -score, np.where(counts, best, -1)))
        first = np.zeros(item.size, dtype=bool)
        picked = order[counts[order]]
        if picked.size:
            starts = np.concatenate([[True], best[picked][1:] != best[picked][:-1]])
            first[picked[starts]] = True
        tp = (counts & first).astype(F32)
        fp = ((has_gt & ~above) | (counts & ~first) | ~has_gt).astype(F32)
        return tp, fp
