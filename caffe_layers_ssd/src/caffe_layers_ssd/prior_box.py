"""PriorBox: the SSD fork's default boxes of a feature map, normalised by the image size, and variances
(with TextBoxes++' denser_prior_boxes); `PriorShapes` and `prior_boxes` are shared with FaceBoxes' variant."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from google.protobuf import message as pb_message

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block

F32 = np.float32


class PriorBoxLayer(Layer):
    """Priors per feature-map cell: min_size, sqrt(min_size * max_size), then one per extra aspect ratio.

    With TextBoxes++' `denser_prior_boxes`, each prior is followed by a copy centred at (h + 1) * step_h.
    """

    type = "PriorBox"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads sizes, aspect ratios, variances, image size, step, offset and denser_prior_boxes, checked."""
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
        self.denser = param.denser_prior_boxes
        self.priors = self.prior_shapes()
        self.num_priors = len(self.priors.half_w)

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
        boxes = prior_boxes(self.priors, layer_h, layer_w, img_h, img_w, step_h, step_w, self.offset)
        if self.clip:
            boxes = np.minimum(np.maximum(boxes, F32(0)), F32(1))
        out = top[0].mutable_cpu_data()
        out[0, 0] = boxes
        out[0, 1] = np.resize(np.asarray(self.variances, dtype=F32), boxes.size)

    def prior_shapes(self) -> PriorShapes:
        """Each prior of a cell in the fork's order; sizes are truncated to integers."""
        shapes: list[tuple[float, float, float, float]] = []
        for s, min_size in enumerate(self.min_sizes):
            low = int(min_size)
            shapes += self.min_size_priors(low)
            if self.max_sizes:
                half = float(F32(np.sqrt(float(low * int(self.max_sizes[s]))))) / 2.0
                shapes.append((0.0, 0.0, half, half))
            for ar in self.aspect_ratios:
                if abs(float(ar) - 1.0) < 1e-6:
                    continue
                root = np.sqrt(float(ar))
                shapes.append((0.0, 0.0, float(F32(low * root)) / 2.0, float(F32(low / root)) / 2.0))
        return PriorShapes.of(shapes, denser=self.denser)

    def min_size_priors(self, min_size: int) -> list[tuple[float, float, float, float]]:
        """A cell's min_size prior(s) as (shift x, shift y, half width, half height): SSD's one square."""
        return [(0.0, 0.0, min_size / 2.0, min_size / 2.0)]


@dataclasses.dataclass(frozen=True)
class PriorShapes:
    """A cell's priors: centre shifts (float32 px), half sizes (float64 px), and which centre row."""

    shift_x: np.ndarray
    shift_y: np.ndarray
    half_w: np.ndarray
    half_h: np.ndarray
    lower_row: np.ndarray  # TextBoxes++' denser copies: centre y at (h + 1) * step_h, not (h + offset)

    @classmethod
    def of(cls, shapes: Sequence[tuple[float, float, float, float]], denser: bool = False) -> PriorShapes:
        """From (shift x, shift y, half w, half h) rows; `denser` follows each by its lower-row copy."""
        rows = np.asarray(shapes, dtype=np.float64).reshape(-1, 4)
        lower = np.zeros(len(rows), dtype=bool)
        if denser:
            rows, lower = np.repeat(rows, 2, axis=0), np.tile([False, True], len(rows))
        return cls(rows[:, 0].astype(F32), rows[:, 1].astype(F32), rows[:, 2], rows[:, 3], lower)


def prior_boxes(priors: PriorShapes, layer_h: int, layer_w: int, img_h: float, img_w: float,
                step_h: np.floating, step_w: np.floating, offset: np.floating) -> np.ndarray:
    """Every cell's priors, flat (h, w, prior, [xmin, ymin, xmax, ymax]), as the fork rounds them.

    Centres (and their shifts) in float, half sizes and the division by the image size in double, stored
    as float.
    """
    centre_x = (np.arange(layer_w, dtype=F32) + offset) * step_w
    centre_y = (np.arange(layer_h, dtype=F32) + offset) * step_h
    lower_y = (np.arange(layer_h, dtype=F32) + F32(1)) * step_h
    cx = (centre_x[None, :, None] + priors.shift_x).astype(np.float64)
    cy = (np.where(priors.lower_row, lower_y[:, None, None], centre_y[:, None, None])
          + priors.shift_y).astype(np.float64)
    half_w, half_h = priors.half_w, priors.half_h
    boxes = np.stack(np.broadcast_arrays((cx - half_w) / img_w, (cy - half_h) / img_h,
                                         (cx + half_w) / img_w, (cy + half_h) / img_h), axis=-1)
    return boxes.astype(F32).reshape(-1)
