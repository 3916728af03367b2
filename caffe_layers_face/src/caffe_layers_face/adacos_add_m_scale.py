"""AdaCosAddmScale (xialuxi/arcface-caffe, AdaCos): ArcFace's margin on the label's cosine, then every logit
scaled by AdaCos' adaptive scale s, which the layer re-estimates at each forward from the batch."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.schema_extensions import get_param_block
from caffe_layers_face.label_margin import LabelColumnLayer, arc_margin_slope

BLOCK = "adacos_add_m_scale_param"


class AdaCosAddmScaleLayer(LabelColumnLayer):
    """Bottoms (cosines (N, C, ...), label (N)); one top. As the fork's Forward_cpu, in both phases:

    - each row's label cosine c (rows with a negative label are skipped) becomes cos(m) when c >= 1,
      c cos(m) - sqrt(1 - c^2) sin(m) above cos(pi - m), else c - m sin(m);
    - theta_med = min(mean of acos over every cosine of the batch, pi / 4);
    - s = log(sum over the batch of exp(s_prev x) with the label entries counted as exp(0), / N) /
      cos(theta_med), where s_prev is the scale of the previous forward (sqrt(2) log(num_classes - 1) at
      first); top = s * the margined cosines.
    """

    type = "AdaCosAddmScale"
    param_block = BLOCK
    skips_negative_labels = True

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads m and num_classes; the scale starts at sqrt(2) log(num_classes - 1)."""
        param = get_param_block(self.layer_param, BLOCK)
        self.m = float(np.float32(param.m))
        self.scale = np.float32(math.sqrt(2) * math.log(float(np.float32(param.num_classes)) - 1))
        self.cos_label: Array | None = None
        self.linear: Array | None = None

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The margin on the label entries, the new scale from the batch, then the scaled logits."""
        xp = side.xp
        f32 = xp.float32
        num = bottom[0].shape[0]
        x = bottom[0].data_on(side).reshape(num, -1)
        rows, cols = self.label_columns(side, bottom)
        cos = xp.minimum(x[rows, cols], f32(1))
        linear = cos <= f32(math.cos(math.pi - self.m))
        arc = cos * f32(math.cos(self.m)) - xp.sqrt(f32(1) - cos * cos) * f32(math.sin(self.m))
        margined = x.copy()
        margined[rows, cols] = xp.where(linear, cos - f32(math.sin(math.pi - self.m) * self.m), arc)
        mean_theta = float(xp.arccos(x).astype(xp.float64).sum()) / x.size
        cos_med = float(np.float32(math.cos(min(float(np.float32(mean_theta)), math.pi / 4))))
        exponent = x * f32(self.scale)
        exponent[rows, cols] = 0
        total = float(xp.exp(exponent).astype(xp.float64).sum())
        self.scale = np.float32(math.log(np.float32(total) / np.float32(num)) / cos_med)
        top[0].mutable_data_on(side).reshape(num, -1)[...] = margined * f32(self.scale)
        self.cos_label, self.linear = cos, linear

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx = s dy (s held constant); the label entries times cos(m) + sin(m) c / sqrt(1 - c^2) (1 on the
        linear branch and where sqrt(1 - c^2) is 0)."""
        if not propagate_down[0]:
            return
        assert self.cos_label is not None and self.linear is not None  # forward ran before backward
        xp = side.xp
        f32 = xp.float32
        num = bottom[0].shape[0]
        dx = bottom[0].mutable_diff_on(side).reshape(num, -1)
        dx[...] = top[0].diff_on(side).reshape(num, -1) * f32(self.scale)
        rows, cols = self.label_columns(side, bottom)
        dx[rows, cols] = dx[rows, cols] * arc_margin_slope(xp, self.cos_label, self.linear, self.m)
