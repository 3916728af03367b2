"""CenterLoss (ydwen/caffe-face): loss = sum_i ||x_i - c_{y_i}||^2 / 2 / N, with the fork's center update
written into the centers' diff by backward."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer_bases.loss import LossLayer, check_labels
from caffe_core.schema_extensions import get_param_block

BLOCK = "center_loss_param"


class CenterLossLayer(LossLayer):
    """Bottoms (features, label); one learnable blob, the centers (num_output, K); a scalar loss."""

    type = "CenterLoss"
    param_block = BLOCK

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the block; creates the centers with center_filler (or checks stored ones)."""
        super().layer_setup(bottom, top)
        param = get_param_block(self.layer_param, BLOCK)
        if param.num_output == 0:
            raise self.error(f"{BLOCK}.num_output must be given and positive")
        self.num_output = param.num_output
        try:
            axis = bottom[0].canonical_axis_index(param.axis)
        except ValueError as err:
            raise self.error(f"{BLOCK}.axis: {err}") from None
        self.k = bottom[0].count_between(axis)
        shape = (self.num_output, self.k)
        if not self.blobs:
            centers = Blob(shape)
            get_filler(param.center_filler).fill(centers)
            self.blobs.append(centers)
        if len(self.blobs) != 1 or self.blobs[0].shape != shape:
            raise self.error(f"expects one centers blob of shape {shape}, got "
                             f"{[b.shape for b in self.blobs]}")
        self.distance: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The label must be one value per sample (the fork's channels = height = width = 1 CHECKs)."""
        label_shape = bottom[1].shape
        if any(d != 1 for d in label_shape[1:]):
            raise self.error(f"the label bottom must hold one value per sample (shape (N,) or (N, 1, 1, 1)), "
                             f"got shape {label_shape}")
        if bottom[0].count != bottom[0].shape[0] * self.k:
            raise self.error(f"the feature bottom {bottom[0].shape} does not give {self.k} features per "
                             f"sample, as the centers expect")
        super().reshape(bottom, top)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """distance_i = x_i - c_{y_i}; loss = distance . distance / N / 2."""
        xp = side.xp
        check_labels(self, bottom[1], self.num_output, None)
        num = bottom[0].shape[0]
        labels = bottom[1].data_on(side).reshape(-1).astype(xp.int64)
        x = bottom[0].data_on(side).reshape(num, self.k)
        distance = x - self.blobs[0].data_on(side)[labels]
        flat = distance.reshape(-1)
        top[0].mutable_data_on(side)[...] = xp.dot(flat, flat) / xp.float32(num) / xp.float32(2)
        self.distance = distance

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """centers' diff += -sum_{y_i = j} distance_i / (1 + count_j) (the fork's update, independent of the
        loss weight); dx = distance * top_diff / N."""
        self.refuse_label_backward(propagate_down)
        assert self.distance is not None  # forward ran before backward
        xp = side.xp
        num = bottom[0].shape[0]
        if self.param_propagate_down(0):
            labels = bottom[1].data_on(side).reshape(-1).astype(xp.int64)
            variation = xp.zeros((self.num_output, self.k), dtype=xp.float32)
            xp.add.at(variation, labels, -self.distance)
            counts = xp.bincount(labels, minlength=self.num_output).astype(xp.float32)
            self.blobs[0].mutable_diff_on(side)[...] += variation / (counts + xp.float32(1))[:, None]
        if propagate_down[0]:
            scale = top[0].diff_on(side).reshape(()) / xp.float32(num)
            out = bottom[0].mutable_diff_on(side)
            out[...] = (self.distance * scale).reshape(out.shape)
