"""Anchor boxes as py-faster-rcnn's generate_anchors makes them (float64, numpy's rounding), and shifted."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

DEFAULT_RATIOS = (0.5, 1.0, 2.0)
DEFAULT_SCALES = (8.0, 16.0, 32.0)


def _centre_form(box: np.ndarray) -> tuple[float, float, float, float]:
    """Width, height and centre of an (x1, y1, x2, y2) box with the +1 pixel convention."""
    width = box[2] - box[0] + 1
    height = box[3] - box[1] + 1
    return width, height, box[0] + 0.5 * (width - 1), box[1] + 0.5 * (height - 1)


def _boxes_around(widths: np.ndarray, heights: np.ndarray, x_ctr: float, y_ctr: float) -> np.ndarray:
    """(x1, y1, x2, y2) boxes of the given sizes around one centre."""
    return np.stack([x_ctr - 0.5 * (widths - 1), y_ctr - 0.5 * (heights - 1),
                     x_ctr + 0.5 * (widths - 1), y_ctr + 0.5 * (heights - 1)], axis=1)


def generate_anchors(base_size: int = 16, ratios: Sequence[float] = DEFAULT_RATIOS,
                     scales: Sequence[float] = DEFAULT_SCALES) -> np.ndarray:
    """(len(ratios) * len(scales), 4) anchors around the base box (0, 0, base_size - 1, base_size - 1).

    Ratio-major: every scale of the first ratio, then of the next; sizes rounded half to even (np.round).
    """
    ratio_values = np.asarray(ratios, dtype=np.float64)
    scale_values = np.asarray(scales, dtype=np.float64)
    base = np.array([0, 0, base_size - 1, base_size - 1], dtype=np.float64)
    width, height, x_ctr, y_ctr = _centre_form(base)
    ratio_widths = np.round(np.sqrt(width * height / ratio_values))
    ratio_heights = np.round(ratio_widths * ratio_values)
    per_ratio = []
    for box in _boxes_around(ratio_widths, ratio_heights, x_ctr, y_ctr):
        w, h, cx, cy = _centre_form(box)
        per_ratio.append(_boxes_around(w * scale_values, h * scale_values, cx, cy))
    return np.concatenate(per_ratio, axis=0)


def shifted_anchors(anchors: np.ndarray, height: int, width: int, feat_stride: int) -> np.ndarray:
    """(height * width * A, 4) anchors at every feature-map cell, ordered (h, w, anchor) slowest first."""
    shift_x, shift_y = np.meshgrid(np.arange(width) * feat_stride, np.arange(height) * feat_stride)
    shifts = np.stack([shift_x.ravel(), shift_y.ravel(), shift_x.ravel(), shift_y.ravel()], axis=1)
    return (anchors[None, :, :] + shifts[:, None, :]).reshape(-1, 4)

