"""BatchNormLayerBase: Caffe's batch-norm statistics (running mean, variance and their scale factor)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2

F32 = np.float32


class BatchNormLayerBase(Layer):
    """One bottom, one top of its shape; blobs 0-2 hold the running mean, variance and their scale factor s.

    The stored statistics are the blobs divided by s (0 when s is 0); in TRAIN, unless use_global_stats, a
    layer normalises by the batch's and folds them into the blobs with `update_running_statistics`.
    """

    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def read_batch_norm_param(self, bottom: Sequence[Blob]) -> None:
        """Reads batch_norm_param (use_global_stats defaults to TEST) and the bottom's channels (axis 1)."""
        param = self.layer_param.batch_norm_param
        self.moving_average_fraction = F32(param.moving_average_fraction)
        self.use_global_stats = param.use_global_stats if param.HasField("use_global_stats") \
            else self.phase == caffe_pb2.TEST
        self.channels = self._channels_of(bottom[0])
        self.eps = F32(param.eps)

    def create_statistics(self) -> None:
        """Zeroed mean (C,), variance (C,) and scale factor (1,) blobs, unless the layer has blobs already."""
        if not self.blobs:
            self.blobs = [Blob((self.channels,)), Blob((self.channels,)), Blob((1,))]
            for blob in self.blobs:
                blob.mutable_cpu_data()[...] = 0

    @staticmethod
    def _channels_of(blob: Blob) -> int:
        return 1 if blob.num_axes == 1 else blob.shape_at(1)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the bottom's shape; the channel count must not change."""
        channels = self._channels_of(bottom[0])
        if channels != self.channels:
            raise self.error(f"bottom has {channels} channels (shape {list(bottom[0].shape)}); the layer "
                             f"was set up for {self.channels}")
        top[0].reshape_like(bottom[0])

    def stored_statistics(self, side: Side) -> tuple[Array, Array]:
        """The stored mean and variance: the blobs times 1 / s (times 0 when s is 0)."""
        s = F32(float(self.blobs[2].data_on(side).reshape(-1)[0]))
        factor = F32(0) if s == 0 else F32(1) / s
        return self.blobs[0].data_on(side) * factor, self.blobs[1].data_on(side) * factor

    def update_running_statistics(self, side: Side, mean: Array, variance: Array, count: int) -> None:
        """s = s f + 1, mean = batch mean + f mean, variance = m / (m - 1) batch variance + f variance, with
        f the moving_average_fraction and m the `count` of values per channel (no correction for m = 1)."""
        fraction = self.moving_average_fraction
        scale = self.blobs[2].mutable_data_on(side)
        scale[...] = scale * fraction + F32(1)
        running_mean = self.blobs[0].mutable_data_on(side)
        running_mean[...] = mean + fraction * running_mean
        correction = F32(count) / F32(count - 1) if count > 1 else F32(1)
        running_variance = self.blobs[1].mutable_data_on(side)
        running_variance[...] = correction * variance + fraction * running_variance
