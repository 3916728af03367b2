"""Pad of inisis: CONSTANT, REPLICATE or REFLECT padding of H (pad_u, pad_d) and W (pad_l, pad_r); all four
pads negative crop instead."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg import separable
from caffe_layers_seg.params import PadParameter


class PadLayer(Layer):
    """Pads (or, with four negative pads, crops) the two spatial axes of an (N, C, H, W) blob."""

    type = "Pad"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the pads, the mode and the constant; refuses in-place use and partly negative pads."""
        if top[0] is bottom[0]:
            raise self.error("Pad does not allow in-place computation")
        param = get_param_block(self.layer_param, "pad_param")
        self.pads = (param.pad_u, param.pad_d, param.pad_l, param.pad_r)
        self.mode = param.pad_type
        self.value = np.float32(param.pad_value)
        self.crop = all(pad < 0 for pad in self.pads)
        if not self.crop and any(pad < 0 for pad in self.pads):
            raise self.error(f"pad_param pads (pad_u, pad_d, pad_l, pad_r) = {list(self.pads)}: negative "
                             f"pads crop only when all four are negative")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, H + pad_u + pad_d, W + pad_l + pad_r); builds each output row's and column's source."""
        num, channels, height, width = bottom[0].shape
        up, down, left, right = self.pads
        out = (height + up + down, width + left + right)
        for size, axis in zip(out, ("height", "width"), strict=True):
            if size < 0:
                raise self.error(f"the pads leave a negative output {axis} ({size}) for input shape "
                                 f"{list(bottom[0].shape)}")
        self.rows = self._sources(height, up, down, ("pad_u", "pad_d"), "height")
        self.cols = self._sources(width, left, right, ("pad_l", "pad_r"), "width")
        top[0].reshape((num, channels, *out))

    def _sources(self, size: int, before: int, after: int, names: tuple[str, str], axis: str) -> np.ndarray:
        """Each output position's input position along one axis (-1: the constant)."""
        if self.crop:
            return np.arange(-before, size + after, dtype=np.int64)
        index = np.full(before + size + after, -1, dtype=np.int64)
        index[before: before + size] = np.arange(size)
        if self.mode == PadParameter.REPLICATE:
            index[:before] = 0
            index[before + size:] = size - 1
        elif self.mode == PadParameter.REFLECT:
            # inisis reflects from the output row or column itself, so a pad may reach into a filled pad.
            if before > size - 1:
                raise self.error(f"REFLECT needs pad_param.{names[0]} ({before}) below the input {axis} "
                                 f"({size})")
            if after > before + size - 1:
                raise self.error(f"REFLECT needs pad_param.{names[1]} ({after}) at most {names[0]} + "
                                 f"{axis} - 1 ({before + size - 1})")
            for k in range(before):
                index[before - 1 - k] = index[before + 1 + k]
            for k in range(after):
                index[before + size + k] = index[before + size - 2 - k]
        return index

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Gathers each output from its source row and column; CONSTANT borders take pad_value."""
        xp = side.xp
        rows, cols = xp.asarray(self.rows), xp.asarray(self.cols)
        x = bottom[0].data_on(side)
        gathered = x[:, :, xp.maximum(rows, 0)][:, :, :, xp.maximum(cols, 0)]
        out = top[0].mutable_data_on(side)
        if self.crop or self.mode != PadParameter.CONSTANT:
            out[...] = gathered
            return
        inside = (rows >= 0)[:, None] & (cols >= 0)[None, :]
        out[...] = xp.where(inside, gathered, self.value)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The true gradient (inisis has no backward): each output's diff added to its source."""
        if not propagate_down[0]:
            return
        height, width = bottom[0].shape[2:]
        rows = separable.selection_matrix(self.rows, height)
        cols = separable.selection_matrix(self.cols, width)
        bottom[0].mutable_diff_on(side)[...] = separable.transposed(side.xp, rows, top[0].diff_on(side), cols)
