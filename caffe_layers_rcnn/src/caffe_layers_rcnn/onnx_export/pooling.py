"""ONNX converters of the ROI pooling layers: ROIPooling (MaxRoiPool, or a Loop), PSROIPooling (integrals)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_rcnn.psroi_pooling import PSROIPoolingLayer
from caffe_layers_rcnn.roi_pooling import ROIPoolingLayer

# Caffe's -FLT_MAX, where the fork's max over a bin starts.
LOWEST = np.float32(np.finfo(np.float32).min)
# The opset that revised MaxRoiPool.
MAX_ROI_POOL_REVISED = 22


def _rois(graph: OnnxGraph, rois: str) -> str:
    """The rois bottom as (R, 5), whatever shape with 5 values per ROI it comes in."""
    shape = graph.shape(rois)
    rows = (shape[0], 5)
    return rois if shape == rows else graph.reshape(rois, rows)


def _padded_rois(graph: OnnxGraph, rois: str, pad_ratio: np.float32) -> str:
    """cascade-rcnn's pad_ratio: each (R, 5) roi grown by (x2 - x1 + 1) * pad_ratio a side (likewise y)."""
    def columns(first: int, count: int, hint: str) -> str:
        return graph.op("Gather", [rois, graph.ints(list(range(first, first + count)), hint)], axis=1)

    low, high = columns(1, 2, "roi_low"), columns(3, 2, "roi_high")
    extent = graph.op("Add", [graph.op("Sub", [high, low]), graph.constant(np.float32(1), "one")])
    pad = graph.op("Mul", [extent, graph.constant(np.float32(pad_ratio), "pad_ratio")])
    return graph.op("Concat", [columns(0, 1, "roi_batch"), graph.op("Sub", [low, pad]),
                               graph.op("Add", [high, pad])], axis=1)


def convert_roi_pooling(layer: ROIPoolingLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """MaxRoiPool (its rounding, bins and clipping are the fork's) before opset 22, a Loop over ROIs after."""
    rois = _rois(graph, bottoms[1])
    if layer.pad_ratio != 0:
        rois = _padded_rois(graph, rois, layer.pad_ratio)
    # onnxruntime has a kernel for MaxRoiPool-1 only, none for its opset-22 revision.
    if graph.opset < MAX_ROI_POOL_REVISED:
        graph.op("MaxRoiPool", [bottoms[0], rois], tops[0], pooled_shape=list(layer.pooled),
                 spatial_scale=float(layer.spatial_scale))
        return
    from onnx import TensorProto, helper

    num_rois, channels, pooled_h, pooled_w = graph.shape(tops[0])
    _, _, height, width = graph.shape(bottoms[0])
    batch_column = graph.op("Gather", [rois, graph.constant(np.int64(0), "batch_column")], axis=1)
    batch = graph.op("Cast", [batch_column], to=TensorProto.INT64)
    boxes = graph.op("Gather", [rois, graph.ints([1, 2, 3, 4], "box_columns")], axis=1)
    scaled = graph.op("Mul", [boxes, graph.constant(layer.spatial_scale, "spatial_scale")])
    corners = graph.reshape(_round_half_away(graph, scaled), (num_rois, 2, 2))
    start, end = graph.node("Split", [corners, graph.ints([1, 1], "halves")], 2, axis=1)
    one = graph.constant(np.float32(1), "one")
    extent = graph.op("Max", [graph.op("Add", [graph.op("Sub", [end, start]), one]), one])
    pooled_sizes = graph.constant(np.array([pooled_w, pooled_h], dtype=np.float32), "pooled")
    bin_size = graph.op("Div", [extent, pooled_sizes])
    col_mask, col_empty = _roi_bin_masks(graph, start, bin_size, 0, pooled_w, width)
    row_mask, row_empty = _roi_bin_masks(graph, start, bin_size, 1, pooled_h, height)
    # The body's nodes are made on the graph, then moved into the body; its constants stay outside, where
    # the body sees them as outer-scope values.
    first_body_node = len(graph.nodes)
    index, condition = graph.fresh("roi_index"), graph.fresh("condition")
    image = graph.op("Gather", [bottoms[0], graph.op("Gather", [batch, index])], axis=0)
    lowest = graph.constant(LOWEST, "lowest")
    rows = graph.reshape(graph.op("Gather", [row_mask, index]), (pooled_h, 1, height, 1))
    rows_max = graph.reduce("ReduceMax", graph.op("Where", [rows, image, lowest]), [2], keepdims=False)
    cols = graph.reshape(graph.op("Gather", [col_mask, index]), (pooled_w, 1, 1, width))
    cells = graph.reduce("ReduceMax", graph.op("Where", [cols, rows_max, lowest]), [3], keepdims=False)
    pooled = graph.op("Transpose", [cells], perm=[2, 1, 0])
    condition_out = graph.identity(condition, graph.fresh("condition_out"))
    body = helper.make_graph(
        graph.nodes[first_body_node:], graph.fresh("roi_body"),
        [helper.make_tensor_value_info(index, TensorProto.INT64, []),
         helper.make_tensor_value_info(condition, TensorProto.BOOL, [])],
        [helper.make_tensor_value_info(condition_out, TensorProto.BOOL, []),
         helper.make_tensor_value_info(pooled, TensorProto.FLOAT, [channels, pooled_h, pooled_w])])
    del graph.nodes[first_body_node:]
    stacked = graph.op("Loop", [graph.constant(np.int64(num_rois), "num_rois"), ""], body=body)
    empty = graph.reshape(graph.op("Or", [graph.reshape(row_empty, (num_rois, pooled_h, 1)),
                                          graph.reshape(col_empty, (num_rois, 1, pooled_w))]),
                          (num_rois, 1, pooled_h, pooled_w))
    graph.op("Where", [empty, graph.constant(np.float32(0), "zero"), stacked], tops[0])


def _roi_bin_masks(graph: OnnxGraph, start: str, bin_size: str, axis: int, pooled: int,
                   size: int) -> tuple[str, str]:
    """ROIPooling's bins on axis 0 (columns) or 1 (rows): (R, pooled, size) membership, (R, pooled) empty."""
    pick = graph.constant(np.int64(axis), "axis_index")
    start, bin_size = (graph.op("Gather", [value, pick], axis=2) for value in (start, bin_size))
    index = np.arange(pooled, dtype=np.float32)
    zero, limit = graph.constant(np.float32(0), "zero"), graph.constant(np.float32(size), "map_size")
    bounds = []
    for rounding, first in (("Floor", index), ("Ceil", index + 1)):
        offset = graph.op(rounding, [graph.op("Mul", [graph.constant(first, "bin_index"), bin_size])])
        bound = graph.op("Min", [graph.op("Max", [graph.op("Add", [offset, start]), zero]), limit])
        bounds.append(graph.reshape(bound, (-1, pooled, 1)))
    positions = graph.constant(np.arange(size, dtype=np.float32), "positions")
    inside = graph.op("And", [graph.op("Not", [graph.op("Less", [positions, bounds[0]])]),
                              graph.op("Less", [positions, bounds[1]])])
    return inside, graph.op("Not", [graph.op("Less", [bounds[0], bounds[1]])])


def convert_psroi_pooling(layer: PSROIPoolingLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """R-FCN's bin arithmetic in float32, each bin's mean from float64 integral images (as the layer)."""
    from onnx import TensorProto

    num_rois, g = graph.shape(tops[0])[0], layer.group_size
    rois = _rois(graph, bottoms[1])
    batch = graph.op("Cast", [graph.op("Gather", [rois, graph.ints([0], "batch_column")], axis=1)],
                     to=TensorProto.INT64)
    boxes = graph.op("Gather", [rois, graph.ints([1, 2, 3, 4], "box_columns")], axis=1)
    rounded = graph.reshape(_round_half_away(graph, boxes), (num_rois, 2, 2))
    # (R, 2, 2): [[x1, y1], [x2 + 1, y2 + 1]] * spatial_scale, each pair (w, h); split into (R, 1, 2) halves.
    plus_one = graph.op("Add", [rounded, graph.constant([[0, 0], [1, 1]], "end_plus_one", np.float32)])
    corners = graph.op("Mul", [plus_one, graph.constant(layer.spatial_scale, "spatial_scale")])
    start, end = graph.node("Split", [corners, graph.ints([1, 1], "halves")], 2, axis=1)
    extent = graph.op("Max", [graph.op("Sub", [end, start]), graph.constant(np.float32(0.1), "least_extent")])
    bin_size = graph.op("Div", [extent, graph.constant(np.float32(g), "group_size")])
    _, _, height, width = graph.shape(bottoms[0])
    low, high = _bin_bounds(graph, start, bin_size, g, (width, height))
    # Bounds (R, g, 2) -> per bin: columns (R, 1, 1, g), rows (R, 1, g, 1).
    col_start, col_end, row_start, row_end = (
        graph.reshape(graph.op("Gather", [bound, graph.constant(np.int64(k), "wh_index")], axis=2), shape)
        for k, shape in ((0, (num_rois, 1, 1, g)), (1, (num_rois, 1, g, 1))) for bound in (low, high))
    corner = _corner_reader(graph, bottoms[0], graph.reshape(batch, (num_rois, 1, 1, 1)), layer.output_dim, g)
    total = graph.op("Sub", [corner(row_end, col_end), corner(row_start, col_end)])
    total = graph.op("Sub", [total, corner(row_end, col_start)])
    total = graph.op("Cast", [graph.op("Add", [total, corner(row_start, col_start)])], to=TensorProto.FLOAT)
    zero_int = graph.constant(np.int64(0), "zero_int")
    rows = graph.op("Max", [graph.op("Sub", [row_end, row_start]), zero_int])
    cols = graph.op("Max", [graph.op("Sub", [col_end, col_start]), zero_int])
    area = graph.op("Cast", [graph.op("Mul", [rows, cols])], to=TensorProto.FLOAT)
    zero = graph.constant(np.float32(0), "zero")
    empty = graph.op("Equal", [area, zero])
    mean = graph.op("Div", [total, graph.op("Where", [empty, graph.constant(np.float32(1), "one"), area])])
    graph.op("Where", [empty, zero, mean], tops[0])


def _round_half_away(graph: OnnxGraph, values: str) -> str:
    """C's round() of float32 values, in float64 so that |v| + 0.5 is exact; float32 result."""
    from onnx import TensorProto

    wide = graph.op("Cast", [values], to=TensorProto.DOUBLE)
    half = graph.constant(np.float64(0.5), "half", np.float64)
    magnitude = graph.op("Floor", [graph.op("Add", [graph.op("Abs", [wide]), half])])
    return graph.op("Cast", [graph.op("Mul", [graph.op("Sign", [wide]), magnitude])], to=TensorProto.FLOAT)


def _bin_bounds(graph: OnnxGraph, start: str, bin_size: str, g: int,
                sizes: tuple[int, int]) -> tuple[str, str]:
    """(R, g, 2) int64 first and one-past-last (column, row) of every bin, clipped to the map's (W, H)."""
    from onnx import TensorProto

    index = np.arange(g, dtype=np.float32).reshape(g, 1)
    zero = graph.constant(np.float32(0), "zero")
    limit = graph.constant(np.array(sizes, dtype=np.float32), "map_size")
    bounds = []
    for rounding, first in (("Floor", index), ("Ceil", index + 1)):
        bound = graph.op("Add", [graph.op("Mul", [graph.constant(first, "bin_index"), bin_size]), start])
        clipped = graph.op("Min", [graph.op("Max", [graph.op(rounding, [bound]), zero]), limit])
        bounds.append(graph.op("Cast", [clipped], to=TensorProto.INT64))
    return bounds[0], bounds[1]


def _corner_reader(graph: OnnxGraph, features: str, batch: str, output_dim: int,
                   g: int) -> Callable[[str, str], str]:
    """Reads the float64 integral image of each output's own channel; `batch` is (R, 1, 1, 1)."""
    from onnx import TensorProto

    _, channels, height, width = graph.shape(features)
    integral = graph.op("Cast", [features], to=TensorProto.DOUBLE)
    for axis in (2, 3):
        integral = graph.op("CumSum", [integral, graph.constant(np.int64(axis), "cumsum_axis")])
    # A zero first row and column: (N, C, H + 1, W + 1), flattened for Gather.
    flat = graph.reshape(graph.op("Pad", [integral, graph.ints([0, 0, 1, 1, 0, 0, 0, 0], "pads")]), (-1,))
    channel = graph.constant(np.arange(channels, dtype=np.int64).reshape(1, output_dim, g, g), "channel")
    image_first = graph.op("Mul", [batch, graph.constant(np.int64(channels), "channels")])
    plane = graph.op("Mul", [graph.op("Add", [image_first, channel]),
                             graph.constant(np.int64((height + 1) * (width + 1)), "plane_size")])
    row_size = graph.constant(np.int64(width + 1), "row_size")

    def corner(rows: str, cols: str) -> str:
        offset = graph.op("Add", [graph.op("Mul", [rows, row_size]), cols])
        return graph.op("Gather", [flat, graph.op("Add", [plane, offset])], axis=0)

    return corner


CONVERTERS: dict[str, Converter] = {"ROIPooling": convert_roi_pooling, "PSROIPooling": convert_psroi_pooling}
