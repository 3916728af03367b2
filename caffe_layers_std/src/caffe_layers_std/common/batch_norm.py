"""BatchNorm: normalises each channel by batch statistics (TRAIN) or stored running statistics."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.batch_norm import BatchNormLayerBase


class BatchNormLayer(BatchNormLayerBase):
    """Caffe's BatchNorm: blobs are the running mean, running variance and their scale factor s."""

    type = "BatchNorm"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the parameters, creates zeroed statistics and pins their lr_mult to 0."""
        self.read_batch_norm_param(bottom)
        self.create_statistics()
        if len(self.blobs) != 3:
            raise self.error(f"expects 3 blobs (mean, variance, scale factor), got {len(self.blobs)}")
        # The statistics are not learned by the solver: they must keep lr_mult 0.
        for i in range(len(self.blobs)):
            if len(self.layer_param.param) == i:
                self.layer_param.param.add(lr_mult=0.0)
            elif self.layer_param.param[i].lr_mult != 0:
                raise self.error(f"param {i} has lr_mult {self.layer_param.param[i].lr_mult}; batch "
                                 f"normalization statistics cannot be configured as learned parameters "
                                 f"(use lr_mult: 0)")
        self.std: Array | None = None
        self.x_norm: Array | None = None

    def _view(self, array: Array, blob: Blob) -> Array:
        """A (N, C, spatial) view of a blob's array."""
        return array.reshape(blob.shape_at(0), self.channels, -1)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = (x - mean) / sqrt(var + eps); in TRAIN also updates the running statistics."""
        xp = side.xp
        x = self._view(bottom[0].data_on(side), bottom[0])
        y = self._view(top[0].mutable_data_on(side), top[0])
        if self.use_global_stats:
            mean, variance = self.stored_statistics(side)
            xp.subtract(x, mean.reshape(1, -1, 1), out=y)
        else:
            mean = x.mean(axis=(0, 2), dtype=xp.float32)
            xp.subtract(x, mean.reshape(1, -1, 1), out=y)
            variance = (y * y).mean(axis=(0, 2), dtype=xp.float32)
            self.update_running_statistics(side, mean, variance, bottom[0].count // self.channels)
        self.std = xp.sqrt(variance + self.eps).reshape(1, -1, 1)
        y /= self.std
        # A later in-place layer (Scale) overwrites the top, so backward needs its own copy of y.
        self.x_norm = y.copy() if self.backward_needed and not self.use_global_stats else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = (dy - mean(dy) - mean(dy y) y) / std, or dy / std with global statistics."""
        if not propagate_down[0]:
            return
        dy = self._view(top[0].diff_on(side), top[0])
        assert self.std is not None  # set by the forward, which runs before backward
        if self.use_global_stats:
            dx = dy / self.std
        else:
            y = self.x_norm
            assert y is not None  # kept by the forward whenever backward is needed with batch statistics
            mean_dy = dy.mean(axis=(0, 2), keepdims=True, dtype=side.xp.float32)
            mean_dy_y = (dy * y).mean(axis=(0, 2), keepdims=True, dtype=side.xp.float32)
            dx = (dy - mean_dy - mean_dy_y * y) / self.std
        bottom[0].mutable_diff_on(side)[...] = dx.reshape(bottom[0].shape)
