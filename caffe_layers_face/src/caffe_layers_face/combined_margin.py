"""CombinedMargin (xialuxi/arcface-caffe): InsightFace's combined margin cos(m1 theta + m2) - m3 on the
label's cosine."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.schema_extensions import get_param_block
from caffe_layers_face.label_margin import LabelColumnLayer

BLOCK = "combined_margin_param"


class CombinedMarginLayer(LabelColumnLayer):
    """Each row's label cosine x becomes cos(m1 acos(x) + m2) - m3, in both phases; rows with a negative
    label are left alone; x outside [-1, 1] gives NaN, as the fork's acos does."""

    type = "CombinedMargin"
    param_block = BLOCK
    skips_negative_labels = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads m1, m2, m3 (transform_test is read by the fork but used nowhere)."""
        param = get_param_block(self.layer_param, BLOCK)
        self.m1, self.m2, self.m3 = param.m1, param.m2, param.m3

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """As LabelColumnLayer's; in place is refused (backward reads the input cosines)."""
        if top[0] is bottom[0]:
            raise self.error("cannot run in place: its backward reads the input cosines")
        super().reshape(bottom, top)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = bottom; top[i, y_i] = cos(m1 acos(x) + m2) - m3."""
        xp = side.xp
        f32 = xp.float32
        x = bottom[0].data_on(side).reshape(bottom[0].shape[0], -1)
        rows, cols = self.label_columns(side, bottom)
        angle = f32(self.m1) * xp.arccos(x[rows, cols]) + f32(self.m2)
        y = top[0].mutable_data_on(side).reshape(x.shape)
        y[...] = x
        y[rows, cols] = xp.cos(angle) - f32(self.m3)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = dy; the label's column times m1 sin(m1 acos(x) + m2) / sqrt(1 - x^2)."""
        if not propagate_down[0]:
            return
        xp = side.xp
        f32 = xp.float32
        x = bottom[0].data_on(side).reshape(bottom[0].shape[0], -1)
        dy = top[0].diff_on(side).reshape(x.shape)
        dx = bottom[0].mutable_diff_on(side).reshape(x.shape)
        dx[...] = dy
        rows, cols = self.label_columns(side, bottom)
        cos = x[rows, cols]
        angle = f32(self.m1) * xp.arccos(cos) + f32(self.m2)
        slope = f32(self.m1) / xp.sqrt(f32(1) - cos * cos) * xp.sin(angle)
        dx[rows, cols] = dy[rows, cols] * slope
