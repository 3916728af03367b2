"""MultiBoxLoss: SSD's training loss: priors matched to ground truth, negatives mined, loc + conf losses."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TypedDict, cast

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.layer_bases.loss import LossLayer, normalization_mode, normalizer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd import mining
from caffe_layers_ssd.bbox import F32, decode_boxes, encode_boxes, split_priors
from caffe_layers_ssd.heads import num_priors
from caffe_layers_ssd.matching import match_boxes
from caffe_layers_ssd.params import signed_label

log = logging.getLogger("caffe.ssd")
GT_ROW = 8


class SavedForBackward(TypedDict, total=False):
    """What forward keeps for backward: the normalizer and each head's (rows it came from, gradient)."""

    normalizer: float
    loc: tuple[tuple[Array, ...] | None, Array | None]
    conf: tuple[tuple[Array, ...] | None, Array | None]


class MultiBoxLossLayer(LossLayer):
    """Bottoms loc (N, P*L*4), conf (N, P*C), priors (1, 2, P*4), ground truth (1, 1, G, 8); a scalar loss."""

    type = "MultiBoxLoss"
    exact_num_bottom_blobs = 4

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads multibox_loss_param and loss_param (fork's checks); propagate_down defaults to loc, conf."""
        super().layer_setup(bottom, top)
        if not self.layer_param.propagate_down:
            self.layer_param.propagate_down.extend([True, True, False, False])
        p = get_param_block(self.layer_param, "multibox_loss_param")
        self.p = p
        if not p.HasField("num_classes"):
            raise self.error("multibox_loss_param.num_classes must be given")
        if p.num_classes < 1:
            raise self.error(f"multibox_loss_param.num_classes should not be less than 1, got "
                             f"{p.num_classes}")
        self.num_classes = p.num_classes
        self.share_location = p.share_location
        self.background_label_id = signed_label(p.background_label_id)
        self.mining_type = p.mining_type
        if p.HasField("do_neg_mining"):
            log.warning("%s: do_neg_mining is deprecated, use mining_type instead", self.describe())
            if p.do_neg_mining != (self.mining_type != mining.NONE):
                raise self.error("multibox_loss_param.do_neg_mining contradicts mining_type (do_neg_mining "
                                 "must be true exactly when mining_type is not NONE)")
        self.do_neg_mining = self.mining_type != mining.NONE
        if self.do_neg_mining and not self.share_location:
            raise self.error("negative mining (multibox_loss_param.mining_type) is only supported with "
                             "share_location: true")
        loss_param = self.layer_param.loss_param
        self.normalization = normalization_mode(loss_param, loss_param.normalization)
        if p.conf_loss_type == mining.SOFTMAX and not 0 <= self.background_label_id < self.num_classes:
            raise self.error(f"multibox_loss_param.background_label_id should be within [0, num_classes) "
                             f"for Softmax, got {self.background_label_id} with {self.num_classes} classes")
        agnostic_classes = 2 if self.background_label_id >= 0 else 1
        if p.map_object_to_agnostic and self.num_classes != agnostic_classes:
            raise self.error(f"multibox_loss_param.map_object_to_agnostic needs num_classes "
                             f"{agnostic_classes} (the object class, with the background if it has an id), "
                             f"got {self.num_classes}")
        if self.mining_type == mining.HARD_EXAMPLE and p.sample_size <= 0:
            raise self.error(f"multibox_loss_param.sample_size must be positive for HARD_EXAMPLE mining, got "
                             f"{p.sample_size}")
        # Location columns: the one shared column (label -1), or one per class except the background.
        self.loc_labels = np.array([-1] if self.share_location else
                                   [c for c in range(self.num_classes) if c != self.background_label_id])
        self.loc_columns = np.zeros(1, dtype=np.int64) if self.share_location else self.loc_labels
        self.saved: SavedForBackward = {}

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the head sizes against the priors; the loss top is 0-d."""
        if bottom[0].shape[:1] != bottom[1].shape[:1]:
            raise self.error(f"loc (shape {bottom[0].shape}) and conf (shape {bottom[1].shape}) should have "
                             f"the same first dimension")
        loc_classes = 1 if self.share_location else self.num_classes
        self.num_priors = num_priors(self, bottom, loc_classes, self.num_classes)
        top[0].reshape(())

    # ----- forward -----
    # Matching, mining and target encoding run on the host in the fork; GPU mode falls back here.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Matches, mines, then sums loc_weight * loc loss and conf loss over the normalizer."""
        num, num_priors = bottom[0].num, self.num_priors
        loc_classes = 1 if self.share_location else self.num_classes
        loc = bottom[0].cpu_data().reshape(num, num_priors, loc_classes, 4)
        conf = bottom[1].cpu_data().reshape(num, num_priors, self.num_classes)
        priors, variances = split_priors(bottom[2].cpu_data(), num_priors)
        gt_boxes, gt_labels, gt_valid = self._ground_truth(bottom[3], num)
        match, overlaps = self._match(loc, priors, variances, gt_boxes, gt_labels, gt_valid)
        match[~gt_valid.any(axis=1)] = -1
        negatives = np.zeros((num, num_priors), dtype=bool)
        if self.do_neg_mining:
            match, negatives = self._mine(loc, conf, priors, variances, gt_boxes, gt_labels, gt_valid, match,
                                          overlaps)
        num_matches = int((match > -1).sum())
        norm = normalizer(self.normalization, num, num_priors, num_matches)
        loc_loss, loc_where, loc_grad = F32(0), None, None
        if num_matches >= 1:
            loc_where, pred, target = self._loc_pairs(match, loc, priors, variances, gt_boxes)
            diff = pred - target
            errors = mining.loc_errors(diff, self.p.loc_loss_type)
            loc_loss = errors.sum(dtype=F32)
            loc_grad = (F32(self.p.loc_weight) * mining.loc_gradient(diff, self.p.loc_loss_type)).astype(F32)
        conf_loss, conf_where, conf_grad = self._conf(conf, match, negatives, gt_labels)
        # The fork adds each part only when its bottom is back-propagated (layer propagate_down).
        propagate = list(self.layer_param.propagate_down) + [False, False]
        loss = F32(0)
        if propagate[0]:
            loss += F32(self.p.loc_weight) * loc_loss / F32(norm)
        if propagate[1]:
            loss += conf_loss / F32(norm)
        top[0].mutable_cpu_data()[...] = loss
        self.saved = {"normalizer": norm, "loc": (loc_where, loc_grad), "conf": (conf_where, conf_grad)}

    def _ground_truth(self, blob: Blob, num: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """GetGroundTruth: each image's boxes (N, T, 4), labels (N, T) and mask, in row order."""
        rows = blob.cpu_data().reshape(-1, GT_ROW)
        item, label = rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64)
        present = item != -1
        if (present & (label == self.background_label_id)).any():
            raise self.error(f"Found background label in the dataset: a ground-truth row has label "
                             f"{self.background_label_id} (background_label_id)")
        use = present & (item >= 0) & (item < num)
        if not self.p.use_difficult_gt:
            use &= rows[:, 7] == 0
        item, label, boxes = item[use], label[use], rows[use, 3:7]
        counts = np.bincount(item, minlength=num)
        width = int(counts.max()) if counts.size else 0
        order = np.argsort(item, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        slot = np.empty(item.size, dtype=np.int64)
        slot[order] = np.arange(item.size) - starts[item[order]]
        gt_boxes = np.zeros((num, width, 4), dtype=F32)
        gt_labels = np.zeros((num, width), dtype=np.int64)
        gt_valid = np.zeros((num, width), dtype=bool)
        gt_boxes[item, slot], gt_labels[item, slot], gt_valid[item, slot] = boxes, label, True
        return gt_boxes, gt_labels, gt_valid

    def _match(self, loc: np.ndarray, priors: np.ndarray, variances: np.ndarray, gt_boxes: np.ndarray,
               gt_labels: np.ndarray, gt_valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """FindMatches: (N, K, P) matched ground-truth slots and overlaps, one row per location column."""
        p, num, columns = self.p, loc.shape[0], len(self.loc_labels)
        wanted = self.loc_labels[None, :, None]
        if p.use_prior_for_matching:
            match, overlaps = match_boxes(gt_boxes, gt_valid, priors[None], p.match_type, p.overlap_threshold,
                                          p.ignore_cross_boundary_bbox)
            if self.share_location:
                return match[:, None], overlaps[:, None]
            matched_label = np.take_along_axis(gt_labels, np.maximum(match, 0), axis=1) if gt_labels.size \
                else np.zeros_like(match)
            keep = (match[:, None] > -1) & (matched_label[:, None] == wanted)
            return np.where(keep, match[:, None], -1), np.repeat(overlaps[:, None], columns, axis=1)
        decoded = decode_boxes(priors[None, :, None], variances[None, :, None], p.code_type,
                               p.encode_variance_in_target, loc[:, :, self.loc_columns])
        predictions = decoded.transpose(0, 2, 1, 3).reshape(num * columns, -1, 4)
        valid = gt_valid[:, None, :] & ((wanted == -1) | (gt_labels[:, None, :] == wanted))
        boxes = np.broadcast_to(gt_boxes[:, None], (num, columns, *gt_boxes.shape[1:]))
        match, overlaps = match_boxes(boxes.reshape(num * columns, -1, 4), valid.reshape(num * columns, -1),
                                      predictions, p.match_type, p.overlap_threshold,
                                      p.ignore_cross_boundary_bbox)
        return match.reshape(num, columns, -1), overlaps.reshape(num, columns, -1)

    def _matched_labels(self, match: np.ndarray, gt_labels: np.ndarray) -> np.ndarray:
        """The ground-truth label of each matched prior (N, K, P); the background elsewhere."""
        if not gt_labels.size:
            return np.full(match.shape, self.background_label_id, dtype=np.int64)
        flat = np.take_along_axis(gt_labels[:, None, :].repeat(match.shape[1], axis=1), np.maximum(match, 0),
                                  axis=2)
        return np.where(match > -1, flat, self.background_label_id)

    def _check_labels(self, labels: np.ndarray) -> None:
        if labels.size and ((labels < 0) | (labels >= self.num_classes)).any():
            bad = labels[(labels < 0) | (labels >= self.num_classes)][0]
            raise self.error(f"a matched ground-truth label {bad} is outside [0, {self.num_classes}) "
                             f"(multibox_loss_param.num_classes)")

    def _mine(self, loc: np.ndarray, conf: np.ndarray, priors: np.ndarray, variances: np.ndarray,
              gt_boxes: np.ndarray, gt_labels: np.ndarray, gt_valid: np.ndarray, match: np.ndarray,
              overlaps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """MineHardExamples (shared locations): picks negatives; HARD_EXAMPLE drops unpicked positives."""
        p = self.p
        labels = self._matched_labels(match, gt_labels)[:, 0]
        self._check_labels(labels[match[:, 0] > -1])
        loss = mining.conf_losses(conf, labels, p.conf_loss_type)
        if self.mining_type == mining.HARD_EXAMPLE and (match > -1).any():
            (image, _, prior), pred, target = self._loc_pairs(match, loc, priors, variances, gt_boxes)
            loc_loss = np.zeros(loss.shape, dtype=F32)
            loc_loss[image, prior] = mining.loc_errors(pred - target, p.loc_loss_type).sum(axis=1, dtype=F32)
            loss = loss + loc_loss
        positive = match[:, 0]
        eligible = mining.eligible_for_mining(self.mining_type, positive, overlaps[:, 0], p.neg_overlap)
        # gt_valid is (N, T): its any over axis 1 is an array, not the scalar the stubs also allow for.
        eligible &= cast(Array, gt_valid.any(axis=1))[:, None]
        wanted = mining.selection_size(self.mining_type, positive, eligible, p.neg_pos_ratio, p.sample_size)
        if p.HasField("nms_param") and p.nms_param.nms_threshold > 0:
            boxes = np.broadcast_to(priors, loc.shape[:2] + (4,)) if p.use_prior_for_nms else \
                decode_boxes(priors, variances, p.code_type, p.encode_variance_in_target, loc[:, :, 0])
            selected = mining.select_examples(loss, eligible, wanted, boxes, p.nms_param.nms_threshold,
                                              p.nms_param.top_k)
        else:
            selected = mining.select_examples(loss, eligible, wanted)
        negatives = (positive == -1) & selected
        if self.mining_type == mining.HARD_EXAMPLE:
            positive = np.where((positive > -1) & ~selected, -1, positive)
        return positive[:, None], negatives

    def _loc_pairs(self, match: np.ndarray, loc: np.ndarray, priors: np.ndarray, variances: np.ndarray,
                   gt_boxes: np.ndarray) -> tuple[tuple[np.ndarray, ...], np.ndarray, np.ndarray]:
        """EncodeLocPrediction: the matched (image, column, prior) triples, their predictions and targets."""
        p = self.p
        image, column, prior = np.nonzero(match > -1)
        gt = gt_boxes[image, match[image, column, prior]]
        pred = loc[image, prior, self.loc_columns[column]]
        target = encode_boxes(priors[prior], variances[prior], p.code_type, p.encode_variance_in_target, gt)
        if p.bp_inside:
            reference = priors[prior] if p.use_prior_for_matching else \
                decode_boxes(priors[prior], variances[prior], p.code_type, p.encode_variance_in_target, pred)
            pred = np.where((reference < 0) | (reference > 1), target, pred)
        if p.encode_variance_in_target:
            pred, target = pred / variances[prior], target / variances[prior]
        return (image, column, prior), pred.astype(F32), target.astype(F32)

    def _conf(self, conf: np.ndarray, match: np.ndarray, negatives: np.ndarray,
              gt_labels: np.ndarray) -> tuple[np.float32, tuple[Array, ...] | None, Array | None]:
        """EncodeConfPrediction and the confidence loss: (loss, where its rows come from, their gradient)."""
        num, num_priors, classes = conf.shape
        background = self.background_label_id
        labels = self._matched_labels(match, gt_labels)
        positive = match > -1
        if self.p.map_object_to_agnostic:
            labels = np.where(positive, background + 1, labels)
        self._check_labels(labels[positive])
        if self.do_neg_mining:
            image, column, prior = np.nonzero(positive)
            neg_image, neg_prior = np.nonzero(negatives)
            is_negative = np.concatenate([np.zeros(image.size, bool), np.ones(neg_image.size, bool)])
            image, prior = np.concatenate([image, neg_image]), np.concatenate([prior, neg_prior])
            column = np.concatenate([column, np.zeros(neg_image.size, np.int64)])
            row_labels = np.concatenate([labels[positive], np.full(neg_image.size, background)])
            order = np.lexsort((prior, column, is_negative, image))
            image, prior, row_labels, is_negative = image[order], prior[order], row_labels[order], \
                is_negative[order]
            where = (image, prior)
            if image.size == 0:
                return F32(0), None, None
            preds = conf[image, prior]
            if self.p.conf_loss_type == mining.SOFTMAX:
                targets = row_labels
            else:
                targets = np.full(preds.shape, F32(background), dtype=F32)
                rows = np.arange(image.size)
                targets[rows[~is_negative], row_labels[~is_negative]] = 1
                if 0 <= background < classes:
                    targets[rows[is_negative], background] = 1
        else:
            where = None
            preds = conf.reshape(-1, classes)
            if self.p.conf_loss_type == mining.SOFTMAX:
                # A prior matched in several location columns takes the label of the last one, as the fork.
                columns = np.arange(match.shape[1])[None, :, None]
                last = np.where(positive, columns, -1).max(axis=1)
                picked = np.take_along_axis(labels, np.maximum(last, 0)[:, None], axis=1)[:, 0]
                targets = np.where(last > -1, picked, background).reshape(-1)
            else:
                image, column, prior = np.nonzero(positive)
                targets = np.full(num * num_priors * classes, F32(background), dtype=F32)
                # The fork steps through the targets by num_priors per image but indexes them as
                # prior * num_classes + label, so images after the first address shifted entries.
                targets[image * num_priors + prior * classes + labels[image, column, prior]] = 1
                targets = targets.reshape(-1, classes)
        if self.p.conf_loss_type == mining.SOFTMAX:
            losses, prob = mining.softmax_losses(preds, targets)
            grad = prob.copy()
            grad[np.arange(len(targets)), targets] -= F32(1)
            return losses.sum(dtype=F32), where, grad
        loss = mining.logistic_losses(preds, targets).sum(dtype=F32)
        return loss, where, (mining.sigmoid(preds) - targets).astype(F32)

    # ----- backward -----
    def backward_cpu(self, top: Sequence[Blob], propagate_down: Sequence[bool],
                     bottom: Sequence[Blob]) -> None:
        """Scatters the loc and conf gradients, times the top diff over the normalizer, into bottoms 0, 1."""
        for index, what in ((2, "prior"), (3, "label")):
            self.refuse_label_backward(propagate_down, index, what)
        scale = F32(top[0].cpu_diff().reshape(-1)[0]) / F32(self.saved["normalizer"])
        if propagate_down[0]:
            diff = bottom[0].mutable_cpu_diff()
            diff[...] = 0
            where, grad = self.saved["loc"]
            if grad is not None:
                assert where is not None  # forward saves both or neither
                image, column, prior = where
                view: Array = diff.reshape(bottom[0].num, self.num_priors, -1, 4)
                view[image, prior, self.loc_columns[column]] = grad * scale
        if propagate_down[1]:
            diff = bottom[1].mutable_cpu_diff()
            diff[...] = 0
            where, grad = self.saved["conf"]
            if grad is not None:
                view = diff.reshape(bottom[1].num, self.num_priors, self.num_classes)
                if where is None:
                    view[...] = (grad * scale).reshape(view.shape)
                else:
                    view[where] = grad * scale
