"""SmoothL1Loss: the box-regression loss of Fast/Faster R-CNN (2 or 4 bottoms) and of SSD (3 bottoms)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer
from caffe_core.schema_extensions import get_param_block


class SmoothL1LossLayer(LossLayer):
    """Smooth L1 loss: caffe-fast-rcnn's with 2 or 4 bottoms, SSD's (weight-free backward) with 3."""

    type = "SmoothL1Loss"
    exact_num_bottom_blobs = -1
    min_bottom_blobs = 2
    max_bottom_blobs = 4

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Adds the default loss weight; reads sigma."""
        super().layer_setup(bottom, top)
        param = get_param_block(self.layer_param, "smooth_l1_loss_param")
        if len(bottom) == 3 and param.HasField("sigma"):
            raise self.error("smooth_l1_loss_param.sigma applies to 2 or 4 bottoms (caffe-fast-rcnn); the "
                             "3-bottom form (SSD) has no sigma")
        if param.sigma == 0:
            raise self.error("smooth_l1_loss_param.sigma must be nonzero (with sigma 0 the loss is always 0)")
        # float32 products, as the fork's float sigma2_.
        self.sigma2 = np.float32(param.sigma) * np.float32(param.sigma)
        self.diff: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Loss top: a scalar; every bottom must match the predictions' num, channels, height and width."""
        for i, blob in enumerate(bottom[1:], start=1):
            if _legacy_shape(blob) != _legacy_shape(bottom[0]):
                weights = "inside weights" if len(bottom) == 4 else "weights"
                role = ("target", weights, "outside weights")[i - 1]
                raise self.error(f"bottom {i} ({role}) has shape {list(blob.shape)}; it must match bottom 0 "
                                 f"(predictions) {list(bottom[0].shape)}")
        top[0].reshape(())

    def allow_force_backward(self, bottom_index: int) -> bool:
        """Unlike most losses, force_backward reaches every bottom (as the fork overrides LossLayer's)."""
        return True

    def _num(self, blob: Blob) -> int:
        return blob.shape_at(0) if blob.num_axes else 1

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """d = w_in (b0 - b1); loss = sum(w_out f(d)) / num."""
        xp = side.xp
        shape = bottom[0].shape
        diff = bottom[0].data_on(side) - bottom[1].data_on(side).reshape(shape)
        if len(bottom) >= 3:
            diff = bottom[2].data_on(side).reshape(shape) * diff
        self.diff = diff
        # The fork compares and forms each branch in double, then stores a float.
        wide = diff.astype(xp.float64)
        sigma2 = float(self.sigma2)
        errors = xp.where(xp.abs(wide) < 1.0 / sigma2, 0.5 * wide * wide * sigma2,
                          xp.abs(wide) - 0.5 / sigma2).astype(xp.float32)
        if len(bottom) == 4:
            errors = bottom[3].data_on(side).reshape(shape) * errors
        total = errors.astype(xp.float64).sum().astype(xp.float32)
        top[0].mutable_data_on(side)[...] = total / np.float32(self._num(bottom[0]))

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """d(b0) = +loss_weight / num f'(d) and d(b1) the opposite (times w_in w_out with four bottoms)."""
        xp = side.xp
        diff = self.diff
        assert diff is not None  # forward_on set it
        slope = xp.where(xp.abs(diff.astype(xp.float64)) < 1.0 / float(self.sigma2), self.sigma2 * diff,
                         xp.sign(diff)).astype(xp.float32)
        loss_weight = top[0].diff_on(side).reshape(-1)[0]
        for i in range(2):
            if not propagate_down[i]:
                continue
            alpha = (np.float32(1 if i == 0 else -1) * loss_weight) / np.float32(self._num(bottom[i]))
            gradient = alpha * slope
            if len(bottom) == 4:
                inside = bottom[2].data_on(side).reshape(slope.shape)
                outside = bottom[3].data_on(side).reshape(slope.shape)
                gradient = gradient * inside * outside
            bottom[i].mutable_diff_on(side)[...] = gradient.reshape(bottom[i].shape)


def _legacy_shape(blob: Blob) -> tuple[int, ...]:
    """(num, channels, height, width) as Caffe's legacy accessors read them (the shape past 4 axes)."""
    if blob.num_axes > 4:
        return blob.shape
    return tuple(blob.legacy_shape(axis) for axis in range(4))
