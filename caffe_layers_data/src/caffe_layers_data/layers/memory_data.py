"""MemoryData: serves batches from arrays given through `reset` (pycaffe's Net.set_input_arrays)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer

log = logging.getLogger("caffe.data")


class MemoryDataLayer(Layer):
    """Caffe's MemoryData layer: memory_data_param (batch_size, channels, height, width)."""

    type = "MemoryData"
    exact_num_bottom_blobs = 0
    exact_num_top_blobs = 2

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes data (batch, C, H, W) and label (batch,)."""
        p = self.layer_param.memory_data_param
        self.batch_size, self.channels, self.height, self.width = p.batch_size, p.channels, p.height, p.width
        if min(self.batch_size, self.channels, self.height, self.width) <= 0:
            raise self.error("batch_size, channels, height and width must be specified and positive in "
                             "memory_data_param")
        self.data: np.ndarray | None = None
        self.labels: np.ndarray | None = None
        self.position = 0
        top[0].reshape((self.batch_size, self.channels, self.height, self.width))
        top[1].reshape((self.batch_size,))

    def reset(self, data: np.ndarray, labels: np.ndarray) -> None:
        """Serves `data` (N, C, H, W) and `labels` (N, ...) from the start; N a multiple of batch_size."""
        n = data.shape[0]
        if data.shape[1:] != (self.channels, self.height, self.width):
            raise self.error(f"data array must have shape (N, {self.channels}, {self.height}, {self.width}), "
                             f"got {data.shape}")
        if labels.shape[0] != n or labels.size != n:
            raise self.error(f"labels must hold one value per data item ({n}), got shape {labels.shape}")
        if n % self.batch_size:
            raise self.error(f"the number of items ({n}) must be a multiple of batch_size {self.batch_size}")
        if self.layer_param.HasField("transform_param"):
            log.warning("%s does not transform array data on Reset()", self.type)
        self.data, self.labels, self.position = data, labels.reshape(n), 0

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shapes are fixed by memory_data_param."""

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the next batch and advances, wrapping around at the end."""
        if self.data is None:
            raise self.error("no data: call set_input_arrays (reset) before forward")
        # reset sets the labels with the data.
        assert self.labels is not None
        end = self.position + self.batch_size
        top[0].mutable_cpu_data()[...] = self.data[self.position:end]
        top[1].mutable_cpu_data()[...] = self.labels[self.position:end]
        self.position = end % self.data.shape[0]
