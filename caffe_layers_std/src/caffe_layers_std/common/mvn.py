"""MVN: mean-variance normalisation per (num, channel), or per num across channels."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class MVNLayer(Layer):
    """y = (x - mean) / (std + eps), or just x - mean without normalize_variance."""

    type = "MVN"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the parameters."""
        param = self.layer_param.mvn_param
        self.normalize_variance = param.normalize_variance
        self.across_channels = param.across_channels
        self.eps = np.float32(param.eps)
        self.std = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: Caffe's 4-D (num, channels, height, width) of the bottom."""
        b = bottom[0]
        top[0].reshape((b.num, b.channels, b.height, b.width))

    def _rows(self, array: Array, blob: Blob) -> Array:
        """The array as (groups, dim): one row per normalised group."""
        groups = blob.num if self.across_channels else blob.num * blob.channels
        return array.reshape(groups, -1)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Subtracts the group mean and, with normalize_variance, divides by std + eps."""
        xp = side.xp
        x = self._rows(bottom[0].data_on(side), bottom[0])
        y = x - x.mean(axis=1, keepdims=True, dtype=xp.float32)
        if self.normalize_variance:
            self.std = xp.sqrt((y * y).mean(axis=1, keepdims=True, dtype=xp.float32)) + self.eps
            y = y / self.std
        top[0].mutable_data_on(side)[...] = y.reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Caffe's closed form: (dy - mean(dy) - y mean(dy y)) / (std + eps), or dy - mean(dy)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        dy = self._rows(top[0].diff_on(side), bottom[0])
        mean_dy = dy.mean(axis=1, keepdims=True, dtype=xp.float32)
        if self.normalize_variance:
            y = self._rows(top[0].data_on(side), bottom[0])
            mean_dy_y = (dy * y).mean(axis=1, keepdims=True, dtype=xp.float32)
            dx = (dy - mean_dy - y * mean_dy_y) / self.std
        else:
            dx = dy - mean_dy
        bottom[0].mutable_diff_on(side)[...] = dx.reshape(bottom[0].shape)
