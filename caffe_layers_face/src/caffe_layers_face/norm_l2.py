"""NormL2 (xialuxi/arcface-caffe, AdaCos): each sample scaled to unit L2 norm, y = x / sqrt(|x|^2 + 1e-7)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer

EPS = 1e-7  # the fork's constant under the square root


class NormL2Layer(Layer):
    """One bottom of at most 4 axes; the top takes its legacy (num, channels, height, width) shape, as the
    fork's Reshape does (a (N, C) bottom gives an (N, C, 1, 1) top)."""

    type = "NormL2"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """No parameters."""
        self.scale: Array | None = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (num, channels, height, width) of the bottom."""
        b = bottom[0]
        top[0].reshape((b.num, b.channels, b.height, b.width))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y_i = x_i / sqrt(sum x_i^2 + 1e-7), per sample."""
        xp = side.xp
        num = bottom[0].shape[0] if bottom[0].num_axes else 1
        x = bottom[0].data_on(side).reshape(num, -1)
        scale = (xp.float32(1) / xp.sqrt((x * x).sum(axis=1, dtype=xp.float64) + EPS)).astype(xp.float32)
        top[0].mutable_data_on(side).reshape(num, -1)[...] = x * scale[:, None]
        self.scale = scale

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx_i = (dy_i - (y_i . dy_i) y_i) / sqrt(|x_i|^2 + 1e-7) (the exact derivative)."""
        if not propagate_down[0]:
            return
        assert self.scale is not None  # forward ran before backward
        num = bottom[0].shape[0] if bottom[0].num_axes else 1
        y = top[0].data_on(side).reshape(num, -1)
        dy = top[0].diff_on(side).reshape(num, -1)
        along = (y * dy).sum(axis=1)
        dx = bottom[0].mutable_diff_on(side).reshape(num, -1)
        dx[...] = (dy - along[:, None] * y) * self.scale[:, None]
