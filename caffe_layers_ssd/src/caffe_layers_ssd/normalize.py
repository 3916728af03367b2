"""Normalize: the SSD fork's L2 normalisation (per image, or across channels per position) and a scale."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block

F32 = np.float32


class NormalizeLayer(Layer):
    """y = x / sqrt(sum x^2 + eps) * scale; the sum runs over a whole image, or over channels per position."""

    type = "Normalize"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads norm_param and creates the scale blob (one value, or one per channel) from scale_filler."""
        self._check_axes(bottom[0])
        param = get_param_block(self.layer_param, "norm_param")
        self.across_spatial = param.across_spatial
        self.channel_shared = param.channel_shared
        self.eps = F32(param.eps)
        channels = bottom[0].channels
        if not self.blobs:
            filler = param.scale_filler if param.HasField("scale_filler") else \
                caffe_pb2.FillerParameter(type="constant", value=1.0)
            self.blobs = [Blob(() if self.channel_shared else (channels,))]
            get_filler(filler).fill(self.blobs[0])
        expected = 1 if self.channel_shared else channels
        if self.blobs[0].count != expected:
            raise self.error(f"Scale size is inconsistent with prototxt config: the scale blob holds "
                             f"{self.blobs[0].count} values, norm_param.channel_shared "
                             f"{str(self.channel_shared).lower()} needs {expected}")
        self.norm: Array | None = None

    def _check_axes(self, blob: Blob) -> None:
        if not 2 <= blob.num_axes <= 4:
            raise self.error(f"Number of axes of bottom blob must be >=2 (and at most 4), got shape "
                             f"{list(blob.shape)}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's."""
        self._check_axes(bottom[0])
        top[0].reshape_like(bottom[0])

    def _split(self, blob: Blob) -> tuple[int, int, int]:
        """(num, channels, spatial) with Caffe's legacy 4-D accessors."""
        return blob.num, blob.channels, blob.height * blob.width

    def _scale(self, side: Side) -> Array:
        """The scale broadcast over (num, channels, spatial)."""
        return self.blobs[0].data_on(side).reshape(1, -1, 1)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Divides by the norm (kept for backward) and multiplies by the scale."""
        xp = side.xp
        x = bottom[0].data_on(side).reshape(self._split(bottom[0]))
        axes = (1, 2) if self.across_spatial else 1
        self.norm = xp.sqrt((x * x).sum(axis=axes, keepdims=True, dtype=xp.float32) + self.eps)
        if self.across_spatial:
            normalised = x * (1.0 / self.norm.astype(xp.float64)).astype(xp.float32)
        else:
            normalised = x / self.norm
        top[0].mutable_data_on(side)[...] = (normalised * self._scale(side)).reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Scale diff: sum(y dy) / scale; bottom diff: (dy - x (x . dy) / norm^2) / norm * scale."""
        xp = side.xp
        split = self._split(bottom[0])
        dy = top[0].diff_on(side).reshape(split)
        if self.param_propagate_down(0):
            y = top[0].data_on(side).reshape(split)
            scale = self.blobs[0].data_on(side)
            product = y * dy
            if self.channel_shared:
                self.blobs[0].mutable_diff_on(side)[...] += product.sum(dtype=xp.float32) / scale
            else:
                per_image = product.sum(axis=2, dtype=xp.float32) / scale.reshape(1, -1)
                self.blobs[0].mutable_diff_on(side)[...] += per_image.sum(axis=0, dtype=xp.float32)
        if propagate_down[0]:
            norm = self.norm
            assert norm is not None  # forward_on set it
            x = bottom[0].data_on(side).reshape(split)
            axes = (1, 2) if self.across_spatial else 1
            dot = (x * dy).sum(axis=axes, keepdims=True, dtype=xp.float32)
            dx = (dy - x * (dot / norm / norm)) / norm
            bottom[0].mutable_diff_on(side)[...] = (dx * self._scale(side)).reshape(bottom[0].shape)
