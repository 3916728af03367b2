"""Coordinate mappings between NetSpec tops, to crop and align feature maps (as in FCNs).

A map is (axis, scale a, shift b): output coordinate = a * input coordinate + b on the spatial axes
after `axis`. Maps compose along a path of layers and invert for the way back.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from caffe.net_spec import Function, Top, layers

PASS_THROUGH_LAYERS = ["AbsVal", "BatchNorm", "Bias", "BNLL", "Dropout", "Eltwise", "ELU", "Log", "LRN",
                       "Exp", "MVN", "Power", "ReLU", "PReLU", "Scale", "Sigmoid", "Split", "TanH",
                       "Threshold"]

# (axis, scale, shift). The axis is an int, or None for a map that holds on any axis; Any, as crop adds
# 1 to it unchecked as BVLC's does (a TypeError for tops joined only through pass-through layers).
CoordMap = tuple[Any, np.ndarray | float, np.ndarray | float]


class UndefinedMapException(Exception):
    """The layer has no defined coordinate mapping."""


class AxisMismatchException(Exception):
    """Two maps act on different axes and cannot compose."""


def conv_params(fn: Function) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """(axis, stride, dilated kernel extent, pad) of a Convolution, Deconvolution, Im2col or Pooling spec."""
    params = fn.params.get("convolution_param", fn.params)
    legacy = {"pad_h", "pad_w", "kernel_h", "kernel_w", "stride_h", "stride_w"} & set(params)
    if legacy:
        raise AssertionError(f"cropping does not support legacy _h/_w params ({', '.join(sorted(legacy))})")
    if "kernel_size" not in params:
        raise ValueError(f"{fn.type_name} spec has no kernel_size, so its coordinate map is unknown")
    axis = params.get("axis", 1)
    kernel = np.array(params["kernel_size"], ndmin=1)
    dilation = np.array(params.get("dilation", 1), ndmin=1)
    return (axis, np.array(params.get("stride", 1), ndmin=1), (kernel - 1) * dilation + 1,
            np.array(params.get("pad", 0), ndmin=1))


def crop_params(fn: Function) -> tuple[int, np.ndarray]:
    """(axis, offset) of a Crop spec, with Caffe's defaults (axis 2, offset 0)."""
    params = fn.params.get("crop_param", fn.params)
    return params.get("axis", 2), np.array(params.get("offset", 0), ndmin=1)


def coord_map(fn: Function) -> CoordMap:
    """The (axis, scale, shift) a layer applies from its bottom to its top."""
    if fn.type_name in ("Convolution", "Pooling", "Im2col"):
        axis, stride, kernel, pad = conv_params(fn)
        return axis, 1 / stride, (pad - (kernel - 1) / 2) / stride
    if fn.type_name == "Deconvolution":
        axis, stride, kernel, pad = conv_params(fn)
        return axis, stride, (kernel - 1) / 2 - pad
    if fn.type_name in PASS_THROUGH_LAYERS:
        return None, 1, 0
    if fn.type_name == "Crop":
        axis, offset = crop_params(fn)
        return axis - 1, 1, -offset
    raise UndefinedMapException(f"no coordinate mapping defined for {fn.type_name} layers")


def compose(base_map: CoordMap, next_map: CoordMap) -> CoordMap:
    """Applies next_map after base_map: scales multiply, next shift scaled by the base scale."""
    ax1, a1, b1 = base_map
    ax2, a2, b2 = next_map
    if ax1 is None:
        ax = ax2
    elif ax2 is None or ax1 == ax2:
        ax = ax1
    else:
        raise AxisMismatchException(f"cannot compose a map on axis {ax1} with one on axis {ax2}")
    return ax, a1 * a2, a1 * b2 + b1


def inverse(coord_map: CoordMap) -> CoordMap:
    """The map back: de-scale and un-shift."""
    ax, a, b = coord_map
    return ax, 1 / a, -b / a


def _mappable_bottoms(top: Top) -> tuple[Top, ...]:
    """Bottoms a map walks through; only a Crop's first (cropped) bottom maps to its top."""
    bottoms = top.fn.inputs
    return bottoms[:1] if top.fn.type_name == "Crop" else bottoms


def coord_map_from_to(top_from: Top, top_to: Top) -> CoordMap:
    """The map from top_from's coordinates to top_to's, through their nearest common ancestor."""
    from_maps: dict[Top, CoordMap] = {top_from: (None, 1, 0)}
    frontier = {top_from}
    while frontier:
        top = frontier.pop()
        try:
            for bottom in _mappable_bottoms(top):
                from_maps[bottom] = compose(from_maps[top], coord_map(top.fn))
                frontier.add(bottom)
        except UndefinedMapException:
            pass
    to_maps: dict[Top, CoordMap] = {top_to: (None, 1, 0)}
    frontier = {top_to}
    while frontier:
        top = frontier.pop()
        if top in from_maps:
            return compose(to_maps[top], inverse(from_maps[top]))
        try:
            for bottom in _mappable_bottoms(top):
                to_maps[bottom] = compose(to_maps[top], coord_map(top.fn))
                frontier.add(bottom)
        except UndefinedMapException:
            continue
    raise RuntimeError("Could not compute map between tops; are they connected by spatial layers?")


def crop(top_from: Top, top_to: Top) -> Top:
    """An L.Crop of top_from to top_to's extent, with axis and offsets from their coordinate map."""
    ax, a, b = coord_map_from_to(top_from, top_to)
    if not np.all(a == 1):
        raise AssertionError(f"scale mismatch on crop (a = {a})")
    if not np.all(b <= 0):
        raise AssertionError(f"cannot crop negative width (b = {b})")
    if not np.all(np.round(b) == b):
        raise AssertionError(f"cannot crop noninteger width (b = {b})")
    return layers.Crop(top_from, top_to, crop_param=dict(axis=ax + 1, offset=list(-np.round(b).astype(int))))
