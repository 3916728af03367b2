"""Box arithmetic of the SSD fork's bbox_util: sizes, Jaccard overlap, encoding, decoding, clipping, scaling.

Boxes are float32 arrays whose last axis is (xmin, ymin, xmax, ymax). The fork stores boxes as protobuf
floats, so every function computes in float32 in the C++ operation order; where the C++ calls the double
`exp`/`log` or mixes in a double literal, the value is formed in float64 and rounded to float32 once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

CORNER, CENTER_SIZE, CORNER_SIZE = 1, 2, 3
F32 = np.float32


def as_boxes(values: npt.ArrayLike) -> np.ndarray:
    """A float32 array of boxes."""
    return np.asarray(values, dtype=F32)


def split_priors(data: npt.ArrayLike, num_priors: int) -> tuple[np.ndarray, np.ndarray]:
    """The prior boxes (P, 4) and their variances (P, 4) of PriorBox output data (1, 2, P * 4)."""
    flat = as_boxes(data).reshape(-1)
    boxes, variances = flat[: num_priors * 4], flat[num_priors * 4: num_priors * 8]
    return boxes.reshape(num_priors, 4), variances.reshape(num_priors, 4)


def box_size(boxes: npt.ArrayLike, normalized: bool = True) -> np.ndarray:
    """BBoxSize: w * h, or (w + 1) (h + 1) for pixel boxes; 0 when xmax < xmin or ymax < ymin."""
    b = as_boxes(boxes)
    width, height = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    if not normalized:
        width, height = width + F32(1), height + F32(1)
    invalid = (b[..., 2] < b[..., 0]) | (b[..., 3] < b[..., 1])
    return np.where(invalid, F32(0), width * height).astype(F32)


def jaccard_overlap(a: npt.ArrayLike, b: npt.ArrayLike, size_a: npt.ArrayLike | None = None,
                    size_b: npt.ArrayLike | None = None,
                    normalized: bool = True) -> np.ndarray:
    """JaccardOverlap of boxes broadcast against each other; sizes default to box_size."""
    a, b = as_boxes(a), as_boxes(b)
    size_a = box_size(a) if size_a is None else as_boxes(size_a)
    size_b = box_size(b) if size_b is None else as_boxes(size_b)
    # As the fork, disjoint boxes intersect in (0, 0, 0, 0), which measures 1 x 1 for pixel boxes.
    disjoint = (b[..., 0] > a[..., 2]) | (b[..., 2] < a[..., 0]) | (b[..., 1] > a[..., 3]) | \
        (b[..., 3] < a[..., 1])
    zero = F32(0)
    width = np.where(disjoint, zero, np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]))
    height = np.where(disjoint, zero, np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]))
    if not normalized:
        width, height = width + F32(1), height + F32(1)
    inter = width * height
    with np.errstate(divide="ignore", invalid="ignore"):
        overlap = inter / (size_a + size_b - inter)
    return np.where((width > 0) & (height > 0), overlap, zero).astype(F32)


def _centre_form(boxes: np.ndarray) -> tuple[np.ndarray, ...]:
    """(width, height, centre x, centre y) in float32, as the fork forms them."""
    width, height = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    return width, height, (boxes[..., 0] + boxes[..., 2]) / F32(2), (boxes[..., 1] + boxes[..., 3]) / F32(2)


def _f32(values: npt.ArrayLike) -> np.ndarray:
    return np.asarray(values).astype(F32)


def decode_boxes(priors: npt.ArrayLike, variances: npt.ArrayLike, code_type: int,
                 variance_encoded_in_target: bool, loc: npt.ArrayLike) -> np.ndarray:
    """DecodeBBox: the boxes that location offsets `loc` describe relative to the priors."""
    p, var, loc = as_boxes(priors), as_boxes(variances), as_boxes(loc)
    if code_type == CORNER:
        if variance_encoded_in_target:
            return _f32(p + loc)
        return _f32(p + var * loc)
    pw, ph, pcx, pcy = _centre_form(p)
    if code_type == CORNER_SIZE:
        scale = np.stack([pw, ph, pw, ph], axis=-1)
        if variance_encoded_in_target:
            return _f32(p + loc * scale)
        return _f32(p + var * loc * scale)
    if code_type != CENTER_SIZE:
        raise ValueError(f"unknown code_type {code_type}")
    if variance_encoded_in_target:
        cx, cy = loc[..., 0] * pw + pcx, loc[..., 1] * ph + pcy
        w_log, h_log = loc[..., 2], loc[..., 3]
    else:
        cx = var[..., 0] * loc[..., 0] * pw + pcx
        cy = var[..., 1] * loc[..., 1] * ph + pcy
        w_log, h_log = var[..., 2] * loc[..., 2], var[..., 3] * loc[..., 3]
    with np.errstate(over="ignore"):
        half_w = _f32(np.exp(w_log.astype(np.float64)) * pw).astype(np.float64) / 2
        half_h = _f32(np.exp(h_log.astype(np.float64)) * ph).astype(np.float64) / 2
    cx, cy = cx.astype(np.float64), cy.astype(np.float64)
    return _f32(np.stack([cx - half_w, cy - half_h, cx + half_w, cy + half_h], axis=-1))


def encode_boxes(priors: npt.ArrayLike, variances: npt.ArrayLike, code_type: int,
                 encode_variance_in_target: bool, boxes: npt.ArrayLike) -> np.ndarray:
    """EncodeBBox: the location targets that describe `boxes` relative to the priors."""
    p, var, g = as_boxes(priors), as_boxes(variances), as_boxes(boxes)
    if code_type == CORNER:
        offsets = g - p
        return _f32(offsets if encode_variance_in_target else offsets / var)
    pw, ph, pcx, pcy = _centre_form(p)
    if code_type == CORNER_SIZE:
        offsets = (g - p) / np.stack([pw, ph, pw, ph], axis=-1)
        return _f32(offsets if encode_variance_in_target else offsets / var)
    if code_type != CENTER_SIZE:
        raise ValueError(f"unknown code_type {code_type}")
    bw, bh, bcx, bcy = _centre_form(g)
    x, y = (bcx - pcx) / pw, (bcy - pcy) / ph
    with np.errstate(divide="ignore", invalid="ignore"):
        w, h = np.log((bw / pw).astype(np.float64)), np.log((bh / ph).astype(np.float64))
    if not encode_variance_in_target:
        x, y = x / var[..., 0], y / var[..., 1]
        w, h = w / var[..., 2].astype(np.float64), h / var[..., 3].astype(np.float64)
    return _f32(np.stack([x, y, _f32(w), _f32(h)], axis=-1))


def clip_boxes(boxes: npt.ArrayLike, height: npt.ArrayLike = 1, width: npt.ArrayLike = 1) -> np.ndarray:
    """ClipBBox: coordinates clamped to [0, width] (x) and [0, height] (y); [0, 1] by default."""
    b = as_boxes(boxes)
    upper = np.stack(np.broadcast_arrays(_f32(width), _f32(height), _f32(width), _f32(height)), axis=-1)
    return np.maximum(np.minimum(b, upper), F32(0)).astype(F32)


def scale_boxes(boxes: npt.ArrayLike, height: npt.ArrayLike,
                width: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """ScaleBBox: boxes times the image size, and their stored sizes (pixel sizes when a side exceeds 1)."""
    b = as_boxes(boxes)
    height, width = np.asarray(height), np.asarray(width)
    factor = np.stack(np.broadcast_arrays(width, height, width, height), axis=-1).astype(F32)
    scaled = (b * factor).astype(F32)
    pixels = np.broadcast_to((width > 1) | (height > 1), scaled.shape[:-1])
    return scaled, np.where(pixels, box_size(scaled, False), box_size(scaled)).astype(F32)


def is_cross_boundary(boxes: npt.ArrayLike) -> np.ndarray | np.bool_:
    """IsCrossBoundaryBBox: some coordinate lies outside [0, 1] (per box; a bool for one box)."""
    b = as_boxes(boxes)
    return ((b < 0) | (b > 1)).any(axis=-1)


def _project(source: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """ProjectBBox onto a source box: boxes that miss the source keep their coordinates, as in the fork."""
    misses = (boxes[..., 0] >= source[..., 2]) | (boxes[..., 2] <= source[..., 0]) | \
        (boxes[..., 1] >= source[..., 3]) | (boxes[..., 3] <= source[..., 1])
    sw, sh = source[..., 2] - source[..., 0], source[..., 3] - source[..., 1]
    origin = np.stack([source[..., 0], source[..., 1], source[..., 0], source[..., 1]], axis=-1)
    projected = clip_boxes((boxes - origin) / np.stack([sw, sh, sw, sh], axis=-1))
    return np.where(misses[..., None], boxes, projected).astype(F32)


def output_boxes(boxes: npt.ArrayLike, height: npt.ArrayLike, width: npt.ArrayLike,
                 resize_param: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """OutputBBox: (boxes mapped onto a (height, width) image under the resize policy, stored sizes)."""
    b = as_boxes(boxes)
    height, width = np.broadcast_to(height, b.shape[:-1]), np.broadcast_to(width, b.shape[:-1])
    if resize_param is None:
        return scale_boxes(clip_boxes(b), height, width)
    resize_h, resize_w = F32(resize_param.height), F32(resize_param.width)
    if resize_h <= 0 or resize_w <= 0:
        raise ValueError("resize_param needs positive height and width to map boxes back to the image")
    if resize_param.resize_mode == 1:  # WARP
        return scale_boxes(clip_boxes(b), height, width)
    if resize_param.resize_mode == 3:  # FIT_LARGE_SIZE_AND_PAD
        aspect = width.astype(F32) / height.astype(F32)
        resize_aspect = resize_w / resize_h
        wide = aspect > resize_aspect
        with np.errstate(divide="ignore", invalid="ignore"):
            pad_y = (resize_h - resize_w / aspect) / F32(2)
            pad_x = (resize_w - resize_h * aspect) / F32(2)
        fy, fx = _f32(pad_y / resize_h), _f32(pad_x / resize_w)
        zero, one = np.zeros_like(fy), np.ones_like(fy)
        source = np.where(wide[..., None],
                          np.stack([zero, fy, one, _f32(1.0 - fy.astype(np.float64))], axis=-1),
                          np.stack([fx, zero, _f32(1.0 - fx.astype(np.float64)), one], axis=-1))
        return scale_boxes(clip_boxes(_project(source.astype(F32), b)), height, width)
    if resize_param.resize_mode == 2:  # FIT_SMALL_SIZE
        if resize_param.height_scale == 0 or resize_param.width_scale == 0:
            return scale_boxes(clip_boxes(b), height, width)
        scaled, _ = scale_boxes(b, resize_param.height_scale, resize_param.width_scale)
        clipped = clip_boxes(scaled, height, width)
        return clipped, box_size(clipped)
    raise ValueError(f"unknown resize_mode {resize_param.resize_mode}")
