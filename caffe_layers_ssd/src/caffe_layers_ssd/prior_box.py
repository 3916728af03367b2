"""PriorBox: the SSD fork's default boxes of a feature map, normalised by the image size, and variances."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from google.protobuf import message as pb_message

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block

F32 = np.float32


class PriorBoxLayer(Layer):
    """Priors per feature-map cell: min_size, sqrt(min_size * max_size), then one per extra aspect ratio."""

    type = "PriorBox"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads sizes, aspect ratios, variances, image size, step and offset with the fork's checks."""
        param = get_param_block(self.layer_param, "prior_box_param")
        if not param.min_size:
            raise self.error("prior_box_param.min_size must be given (at least one)")
        if min(param.min_size) <= 0:
            raise self.error(f"prior_box_param.min_size must be positive, got {list(param.min_size)}")
        self.min_sizes = [F32(s) for s in param.min_size]
        self.aspect_ratios = [F32(1)]
        for ar in (F32(r) for r in param.aspect_ratio):
            if any(float(abs(ar - known)) < 1e-6 for known in self.aspect_ratios):
                continue
            self.aspect_ratios.append(ar)
            if param.flip:
                self.aspect_ratios.append(F32(1.0 / float(ar)))
        self.max_sizes = [F32(s) for s in param.max_size]
        if self.max_sizes:
            if len(self.max_sizes) != len(self.min_sizes):
                raise self.error(f"prior_box_param.max_size must be given once per min_size "
                                 f"({len(self.min_sizes)} min_size, {len(self.max_sizes)} max_size)")
            for low, high in zip(self.min_sizes, self.max_sizes, strict=True):
                if high <= low:
                    raise self.error(f"prior_box_param.max_size {high:g} must be greater than min_size "
                                     f"{low:g}")
        self.num_priors = len(self.aspect_ratios) * len(self.min_sizes) + len(self.max_sizes)
        self.clip = param.clip
        variances = [F32(v) for v in param.variance]
        if len(variances) > 1 and len(variances) != 4:
            raise self.error(f"prior_box_param.variance must be given once or 4 times, got {len(variances)}")
        if any(v <= 0 for v in variances):
            raise self.error(f"prior_box_param.variance must be positive, got "
                             f"{[float(v) for v in variances]}")
        self.variances = variances or [F32(0.1)]
        self.img_h, self.img_w = self._pair(param, "img_size", "img_h", "img_w")
        self.step_h, self.step_w = self._pair(param, "step", "step_h", "step_w")
        self.offset = F32(param.offset)

    def _pair(self, param: pb_message.Message, both: str, first: str, second: str) -> tuple[float, float]:
        """(h, w) from `both` or from the `first`/`second` pair (0, 0 when neither is given)."""
        if param.HasField(first) or param.HasField(second):
            if param.HasField(both):
                raise self.error(f"prior_box_param: either {both} or {first}/{second} should be given; "
                                 f"not both")
            values = (getattr(param, first), getattr(param, second))
            names = (first, second)
        elif param.HasField(both):
            values = (getattr(param, both),) * 2
            names = (both, both)
        else:
            return 0, 0
        for name, value in zip(names, values, strict=True):
            if value <= 0:
                raise self.error(f"prior_box_param.{name} should be larger than 0, got {value:g}")
        return values

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (1, 2, H * W * num_priors * 4), boxes in channel 0 and variances in channel 1."""
        count = bottom[0].height * bottom[0].width * self.num_priors * 4
        if count <= 0:
            raise self.error(f"the feature map (bottom 0, shape {bottom[0].shape}) has no cells")
        top[0].reshape((1, 2, count))

    # The fork computes priors on the host only (it has no GPU kernel for them); GPU mode falls back here.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Writes every cell's priors (row-major over the feature map) and the variances."""
        layer_h, layer_w = bottom[0].height, bottom[0].width
        img_h, img_w = (self.img_h, self.img_w) if self.img_h and self.img_w else \
            (bottom[1].height, bottom[1].width)
        step_h, step_w = (F32(self.step_h), F32(self.step_w)) if self.step_h and self.step_w else \
            (F32(img_h) / F32(layer_h), F32(img_w) / F32(layer_w))
        centre_x = (np.arange(layer_w, dtype=F32) + self.offset) * step_w
        centre_y = (np.arange(layer_h, dtype=F32) + self.offset) * step_h
        widths, heights = self._box_sizes()
        half_w, half_h = widths.astype(np.float64) / 2.0, heights.astype(np.float64) / 2.0
        cx = centre_x.astype(np.float64)[None, :, None]
        cy = centre_y.astype(np.float64)[:, None, None]
        boxes = np.stack(np.broadcast_arrays((cx - half_w) / img_w, (cy - half_h) / img_h,
                                             (cx + half_w) / img_w, (cy + half_h) / img_h), axis=-1)
        boxes = boxes.astype(F32).reshape(-1)
        if self.clip:
            boxes = np.minimum(np.maximum(boxes, F32(0)), F32(1))
        out = top[0].mutable_cpu_data()
        out[0, 0] = boxes
        out[0, 1] = np.resize(np.asarray(self.variances, dtype=F32), boxes.size)

    def _box_sizes(self) -> tuple[np.ndarray, np.ndarray]:
        """Each prior's (width, height) in pixels, in the fork's order; sizes are truncated to integers."""
        widths, heights = [], []
        for s, min_size in enumerate(self.min_sizes):
            low = float(int(min_size))
            widths.append(low)
            heights.append(low)
            if self.max_sizes:
                side = float(F32(np.sqrt(float(int(low) * int(self.max_sizes[s])))))
                widths.append(side)
                heights.append(side)
            for ar in self.aspect_ratios:
                if abs(float(ar) - 1.0) < 1e-6:
                    continue
                root = np.sqrt(float(ar))
                widths.append(float(F32(low * root)))
                heights.append(float(F32(low / root)))
        return np.asarray(widths, dtype=F32), np.asarray(heights, dtype=F32)
