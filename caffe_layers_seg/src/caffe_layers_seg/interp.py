"""Interp of PSPNet / DeepLab: bilinear resampling with aligned corners (George Papandreou's interp2), the
input optionally cropped by non-positive pad_beg / pad_end."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg import separable

F32 = np.float32


class InterpLayer(Layer):
    """Output size from shrink_factor, zoom_factor, both, or height and width; interp2's float32 weights."""

    type = "Interp"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads pad_beg and pad_end, which may only crop."""
        self.param = get_param_block(self.layer_param, "interp_param")
        for name in ("pad_beg", "pad_end"):
            if getattr(self.param, name) > 0:
                raise self.error(f"interp_param.{name} must not be positive (only cropping is supported), "
                                 f"got {getattr(self.param, name)}")
        self.pad_beg, self.pad_end = self.param.pad_beg, self.param.pad_end

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, out_h, out_w) by PSPNet's rules on the cropped input size."""
        num, channels, height, width = bottom[0].shape
        self.in_size = (height, width)
        self.eff_size = (height + self.pad_beg + self.pad_end, width + self.pad_beg + self.pad_end)
        self.out_size = self._out_size()
        for size, what in ((self.eff_size, "cropped input"), (self.out_size, "output")):
            if min(size) <= 0:
                raise self.error(f"the {what} size must be positive, got {size[0]} x {size[1]} (input "
                                 f"{height} x {width}, interp_param)")
        self.rows = _axis(self.eff_size[0], self.out_size[0])
        self.cols = _axis(self.eff_size[1], self.out_size[1])
        top[0].reshape((num, channels, *self.out_size))

    def _out_size(self) -> tuple[int, int]:
        param = self.param
        has_shrink, has_zoom = param.HasField("shrink_factor"), param.HasField("zoom_factor")
        if has_shrink and not has_zoom:
            return self._shrunk(self.eff_size)
        if has_zoom and not has_shrink:
            return self._zoomed(self.eff_size)
        if param.HasField("height") and param.HasField("width"):
            return param.height, param.width
        if has_shrink and has_zoom:
            return self._zoomed(self._shrunk(self.eff_size))
        raise self.error("interp_param needs shrink_factor, zoom_factor, both of them, or height and width")

    def _factor(self, name: str) -> int:
        value = getattr(self.param, name)
        if value < 1:
            raise self.error(f"interp_param.{name} must be positive, got {value}")
        return value

    def _shrunk(self, size: tuple[int, int]) -> tuple[int, int]:
        factor = self._factor("shrink_factor")
        height, width = size
        return (height - 1) // factor + 1, (width - 1) // factor + 1

    def _zoomed(self, size: tuple[int, int]) -> tuple[int, int]:
        factor = self._factor("zoom_factor")
        height, width = size
        return height + (height - 1) * (factor - 1), width + (width - 1) * (factor - 1)

    def _same_size(self) -> bool:
        return self.eff_size == self.out_size

    def _crop(self, array: Array) -> Array:
        start = -self.pad_beg
        return array[:, :, start: start + self.eff_size[0], start: start + self.eff_size[1]]

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = h0 (w0 p00 + w1 p01) + h1 (w0 p10 + w1 p11) in float32; same sizes copy the cropped input."""
        xp = side.xp
        x = self._crop(bottom[0].data_on(side))
        out = top[0].mutable_data_on(side)
        if self._same_size():
            out[...] = x
            return
        h0, h1, hw0, hw1 = self.rows
        w0, w1, ww0, ww1 = self.cols
        upper, lower = x[:, :, xp.asarray(h0)], x[:, :, xp.asarray(h1)]
        w0, w1 = xp.asarray(w0), xp.asarray(w1)
        ww0, ww1 = xp.asarray(ww0), xp.asarray(ww1)
        r0 = ww0 * upper[..., w0] + ww1 * upper[..., w1]
        r1 = ww0 * lower[..., w0] + ww1 * lower[..., w1]
        out[...] = xp.asarray(hw0)[:, None] * r0 + xp.asarray(hw1)[:, None] * r1

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Zeroes the bottom diff and adds each output's diff times its four weights, in interp2's order."""
        if not propagate_down[0]:
            return
        bottom_diff = bottom[0].mutable_diff_on(side)
        bottom_diff.fill(0)
        if self._same_size():
            self._crop(bottom_diff)[...] += top[0].diff_on(side)
            return
        width = self.in_size[1]
        start = -self.pad_beg
        h0, h1, hw0, hw1 = self.rows
        w0, w1, ww0, ww1 = self.cols
        taps = [(np.add.outer((hi + start) * width, wi + start).ravel(), np.outer(hw, ww).ravel())
                for hi, hw in ((h0, hw0), (h1, hw1)) for wi, ww in ((w0, ww0), (w1, ww1))]
        separable.scatter_taps(side.xp, bottom_diff, top[0].diff_on(side), taps)


def _axis(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(neighbour, next neighbour or itself at the end, weight 1 - lambda, weight lambda) per output index."""
    ratio = F32(src - 1) / F32(dst - 1) if dst > 1 else F32(0)
    coord = ratio * np.arange(dst).astype(F32)
    first = coord.astype(np.int64)
    step = (first < src - 1).astype(np.int64)
    lam = coord - first.astype(F32)
    return first, first + step, F32(1) - lam, lam
