"""CosinAddm (xialuxi/arcface-caffe): ArcFace's additive angular margin on the label's cosine,
cos(theta + m), with the linear fallback cos(theta) - m sin(m) once theta + m passes pi."""

from __future__ import annotations

import math
from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_face.label_margin import LabelColumnLayer, arc_margin_slope

BLOCK = "cosin_add_m_param"


class CosinAddmLayer(LabelColumnLayer):
    """TRAIN: the label's cosine c < 1 becomes cos(acos(c) + m) above cos(pi - m), c - m sin(m) at or below
    it; c >= 1 stays. TEST: the identity (the fork's Forward_gpu)."""

    type = "CosinAddm"
    param_block = BLOCK

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads m; transform_test is read by the fork but changes nothing (TEST is always the identity)."""
        self.m = float(get_param_block(self.layer_param, BLOCK).m)
        self.cos_label: Array | None = None
        self.linear: Array | None = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the cosines and, in TRAIN, moves each row's label cosine by the margin."""
        xp = side.xp
        f32 = xp.float32
        x = bottom[0].data_on(side).reshape(bottom[0].shape[0], -1)
        if self.phase == caffe_pb2.TEST:
            if top[0] is not bottom[0]:
                top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)
            return
        rows, cols = self.label_columns(side, bottom)
        cos = x[rows, cols].copy()
        inside = cos < f32(1)
        threshold = f32(math.cos(math.pi - self.m))
        linear = inside & (cos <= threshold)
        angle = xp.arccos(xp.minimum(cos, f32(1))) + f32(self.m)
        moved = xp.where(linear, cos - f32(self.m) * f32(math.sin(self.m)), xp.cos(angle))
        y = top[0].mutable_data_on(side).reshape(x.shape)
        if top[0] is not bottom[0]:
            y[...] = x
        y[rows, cols] = xp.where(inside, moved, cos)
        self.cos_label, self.linear = cos, linear

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy, the label's column times cos(m) + sin(m) c / sqrt(1 - c^2) (1 on the linear branch and
        where sqrt(1 - c^2) is 0)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        dy = top[0].diff_on(side).reshape(bottom[0].shape[0], -1)
        dx = bottom[0].mutable_diff_on(side).reshape(dy.shape)
        if top[0] is not bottom[0]:
            dx[...] = dy
        if self.phase == caffe_pb2.TEST:
            return
        assert self.cos_label is not None and self.linear is not None  # forward ran before backward
        rows, cols = self.label_columns(side, bottom)
        dx[rows, cols] = dx[rows, cols] * arc_margin_slope(xp, self.cos_label, self.linear, self.m)
