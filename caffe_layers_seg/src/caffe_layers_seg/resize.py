"""Resize of inisis (resize_param 251): bilinear resampling with source coordinate = index * src / dst, the
neighbours past the last row or column dropped without renormalising."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg import separable

F32 = np.float32


class ResizeLayer(Layer):
    """Bilinear resize to height x width, or to out_*_scale times the input with is_pyramid_test."""

    type = "Resize"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks that the fields the chosen mode needs are set."""
        param = get_param_block(self.layer_param, "resize_param")
        needed = ("out_height_scale", "out_width_scale") if param.is_pyramid_test else ("height", "width")
        for name in needed:
            if not param.HasField(name):
                mode = "with" if param.is_pyramid_test else "without"
                raise self.error(f"resize_param.{name} is required {mode} is_pyramid_test")
        self.param = param

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, height, width), or int(scale * input size) per axis; computes the source taps."""
        num, channels, height, width = bottom[0].shape
        param = self.param
        if param.is_pyramid_test:
            out = (int(F32(param.out_height_scale) * F32(height)),
                   int(F32(param.out_width_scale) * F32(width)))
        else:
            out = (param.height, param.width)
        for size, name in zip(out, ("height", "width"), strict=True):
            if size <= 0:
                raise self.error(f"the output {name} must be positive, got {size} (resize_param)")
        self.rows = _axis(height, out[0])
        self.cols = _axis(width, out[1])
        top[0].reshape((num, channels, *out))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """dst = w_h0 w_w0 x00 + w_h0 w_w1 x01 + w_h1 w_w0 x10 + w_h1 w_w1 x11, in inisis' float32 order."""
        xp = side.xp
        x = bottom[0].data_on(side)
        h0, h1, wh0, wh1 = self.rows
        w0, w1, ww0, ww1 = self.cols
        upper, lower = x[:, :, xp.asarray(h0)], x[:, :, xp.asarray(h1)]
        w0, w1 = xp.asarray(w0), xp.asarray(w1)
        out = top[0].mutable_data_on(side)
        out[...] = xp.asarray(np.outer(wh0, ww0)) * upper[..., w0]
        out += xp.asarray(np.outer(wh0, ww1)) * upper[..., w1]
        out += xp.asarray(np.outer(wh1, ww0)) * lower[..., w0]
        out += xp.asarray(np.outer(wh1, ww1)) * lower[..., w1]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Zeroes the bottom diff and adds each output's diff times its four weights, as inisis' loop."""
        if not propagate_down[0]:
            return
        width = bottom[0].shape[3]
        h0, h1, wh0, wh1 = self.rows
        w0, w1, ww0, ww1 = self.cols
        taps = [((np.add.outer(hi * width, wi)).ravel(), np.outer(wh, ww).ravel())
                for hi, wh in ((h0, wh0), (h1, wh1)) for wi, ww in ((w0, ww0), (w1, ww1))]
        bottom_diff = bottom[0].mutable_diff_on(side)
        bottom_diff.fill(0)
        separable.scatter_taps(side.xp, bottom_diff, top[0].diff_on(side), taps)


def _axis(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(neighbour, next neighbour, their weights) per output index; past the end the next weighs 0."""
    scale = F32(src) / F32(dst)
    coord = np.arange(dst).astype(F32) * scale
    first = np.floor(coord).astype(np.int64)
    frac = coord - first.astype(F32)
    weight0 = np.abs(F32(1) - frac)
    weight1 = np.abs(frac)
    inside = first + 1 < src
    return first, np.minimum(first + 1, src - 1), weight0, np.where(inside, weight1, F32(0))
