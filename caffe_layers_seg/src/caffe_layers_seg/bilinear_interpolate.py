"""BilinearInterpolate of inisis: bilinear resampling to dst_h x dst_w (or by scale_factor), align_corners
or half-pixel source coordinates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg import separable

F32 = np.float32


class BilinearInterpolateLayer(Layer):
    """Bilinear resampling with inisis' coordinate rules, clamping and float32 arithmetic."""

    type = "BilinearInterpolate"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Fixes the output size from dst_h / dst_w (missing ones keep the input's) or scale_factor."""
        param = get_param_block(self.layer_param, "bilinear_interpolate_param")
        has_dst = param.HasField("dst_h") or param.HasField("dst_w")
        has_scale = param.HasField("scale_factor")
        if has_dst == has_scale:
            raise self.error("bilinear_interpolate_param needs dst_h / dst_w or scale_factor (exactly one of "
                             "them)")
        height, width = bottom[0].shape[2:]
        if has_dst:
            self.out_size = (param.dst_h if param.HasField("dst_h") else height,
                             param.dst_w if param.HasField("dst_w") else width)
        else:
            scale = F32(param.scale_factor)
            self.out_size = (int(F32(height) * scale), int(F32(width) * scale))
        for size, name in zip(self.out_size, ("dst_h", "dst_w"), strict=True):
            if size <= 0:
                raise self.error(f"the output size must be positive: {name} is {size} "
                                 f"(bilinear_interpolate_param.{name} or scale_factor)")
            if size == 1 and param.align_corners:
                raise self.error(f"bilinear_interpolate_param.align_corners needs an output of at least 2, "
                                 f"but {name} is 1 (inisis divides by {name} - 1)")
        self.align_corners = param.align_corners

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, dst_h, dst_w); computes each output row's and column's neighbours and weights."""
        num, channels, height, width = bottom[0].shape
        if height < 2 or width < 2:
            raise self.error(f"the input must be at least 2 x 2 (inisis always reads two neighbours), got "
                             f"{height} x {width}")
        self.rows = self._axis(height, self.out_size[0])
        self.cols = self._axis(width, self.out_size[1])
        top[0].reshape((num, channels, *self.out_size))

    def _axis(self, src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(left neighbour, right neighbour, right weight w1 - c, left weight c - w0) along one axis."""
        steps = np.arange(dst)
        if self.align_corners:
            coord = (F32(src - 1) / F32(dst - 1)) * steps.astype(F32)
        else:
            # float(src) / dst is float, times (i + 0.5) in double, stored as float.
            coord = (np.float64(F32(src) / F32(dst)) * (steps + 0.5) - 0.5).astype(F32)
        coord = np.minimum(coord, F32(src - 1))
        coord = np.maximum(coord, F32(0))
        left = np.clip(np.floor(coord).astype(np.int64), 0, src - 2)
        right = left + 1
        return left, right, right.astype(F32) - coord, coord - left.astype(F32)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = (h1 - h) ((w1 - w) q00 + (w - w0) q01) + (h - h0) ((w1 - w) q10 + (w - w0) q11) in float32."""
        xp = side.xp
        x = bottom[0].data_on(side)
        h0, h1, ha, hb = (xp.asarray(a) for a in self.rows)
        w0, w1, wa, wb = (xp.asarray(a) for a in self.cols)
        upper, lower = x[:, :, h0], x[:, :, h1]
        r0 = wa * upper[..., w0] + wb * upper[..., w1]
        r1 = wa * lower[..., w0] + wb * lower[..., w1]
        top[0].mutable_data_on(side)[...] = ha[:, None] * r0 + hb[:, None] * r1

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The true gradient (inisis has no backward): each output's diff spread back with its weights."""
        if not propagate_down[0]:
            return
        height, width = bottom[0].shape[2:]
        h0, h1, ha, hb = self.rows
        w0, w1, wa, wb = self.cols
        rows = separable.weight_matrix(height, [(h0, ha), (h1, hb)])
        cols = separable.weight_matrix(width, [(w0, wa), (w1, wb)])
        bottom[0].mutable_diff_on(side)[...] = separable.transposed(side.xp, rows, top[0].diff_on(side), cols)
