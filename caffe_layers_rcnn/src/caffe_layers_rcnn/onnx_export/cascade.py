"""ONNX converters of Cascade R-CNN's types: DecodeBBox at TEST (exact arithmetic); the others refuse, saying
why."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_core.proto import caffe_pb2
from caffe_layers_rcnn.box_group_output import BoxGroupOutputLayer
from caffe_layers_rcnn.decode_bbox import BBOX_CHANNELS, DecodeBBoxLayer
from caffe_layers_rcnn.roi_align import ROIAlignLayer
from caffe_layers_rcnn.scale_route import ScaleRouteLayer


def convert_roi_align(layer: ROIAlignLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """Refused: ONNX RoiAlign averages points inside bins and zeroes other points than the fork's layer."""
    raise OnnxExportError(
        "ROIAlign (zhaoweicai/cascade-rcnn) has no exact ONNX equivalent: it samples ONE bilinear point at "
        "each bin corner, a (pooled_h + 1) x (pooled_w + 1) grid, and gives 0 for points beyond "
        "[-0.5, size - 0.5] "
        "and for ROIs of non-positive size, while ONNX RoiAlign averages sampling points inside each of "
        "pooled_h x pooled_w bins, zeroes only points beyond [-1, size] and (in output_half_pixel mode) "
        "stretches ROIs to at least 1 pixel. Even with one sample per bin and adjusted ROIs, the points near "
        "the map's edges differ")


def convert_box_group_output(layer: BoxGroupOutputLayer, graph: OnnxGraph, bottoms: Sequence[str],
                             tops: Sequence[str]) -> None:
    """Refused: the proposals come from a data-dependent threshold, sort and the fork's greedy NMS."""
    raise OnnxExportError(
        "BoxGroupOutput has no exact ONNX equivalent: its fg_thr and min_size filters, max_nms_num sort and "
        "the fork's greedy NMS (its own asymmetric overlap arithmetic) give a data-dependent number of rois "
        "that ONNX's NonMaxSuppression does not reproduce. Export the net up to its bottoms "
        f"({', '.join(layer.layer_param.bottom)}: the objectness probabilities and box deltas) and make the "
        "proposals outside the ONNX model")


def convert_scale_route(layer: ScaleRouteLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """Refused: it follows data-dependent proposals (and ONNX has no exact form of its fallback)."""
    raise OnnxExportError(
        "ScaleRoute has no exact ONNX equivalent here: it routes the rows of proposals made by a "
        "data-dependent layer (BoxGroupOutput, which no ONNX model reproduces), and its empty-range fallback "
        "(the one roi closest to the mid scale in log2) compares log2 values in the fork's float arithmetic")


def convert_decode_bbox(layer: DecodeBBoxLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """TEST: every row decoded (the same float32 operations); TRAIN screens rows by the data: refused."""
    if layer.phase != caffe_pb2.TEST:
        raise OnnxExportError("DecodeBBox in the TRAIN phase drops inverted boxes and rows matched to ground "
                              "truth (a data-dependent row count); only the TEST phase, which keeps every "
                              "row, is exported")
    rows = graph.shape(bottoms[0])[0]
    deltas = graph.reshape(bottoms[0], (rows, BBOX_CHANNELS))
    rois = graph.reshape(bottoms[1], (rows, 5))

    def columns(value: str, first: int, count: int, hint: str) -> str:
        return graph.op("Gather", [value, graph.ints(list(range(first, first + count)), hint)], axis=1)

    mean = graph.constant(layer.regression.mean, "bbox_mean")
    std = graph.constant(layer.regression.std, "bbox_std")
    d = graph.op("Add", [graph.op("Mul", [columns(deltas, 4, 4, "foreground_deltas"), std]), mean])
    one, two, half = (graph.constant(np.float32(v), name)
                      for v, name in ((1, "one"), (2, "two"), (0.5, "half")))
    low, high = columns(rois, 1, 2, "roi_low"), columns(rois, 3, 2, "roi_high")
    sizes = graph.op("Add", [graph.op("Sub", [high, low]), one])
    centres = graph.op("Mul", [half, graph.op("Add", [high, low])])
    target_centres = graph.op("Add", [graph.op("Mul", [columns(d, 0, 2, "d_xy"), sizes]), centres])
    target_sizes = graph.op("Mul", [sizes, graph.op("Exp", [columns(d, 2, 2, "d_wh")])])
    new_low = graph.op("Sub", [target_centres, graph.op("Div", [graph.op("Sub", [target_sizes, one]), two])])
    new_high = graph.op("Sub", [graph.op("Add", [new_low, target_sizes]), one])
    boxes = graph.op("Concat", [columns(rois, 0, 1, "roi_batch"), new_low, new_high], axis=1)
    graph.reshape(boxes, (rows, 5, 1, 1), tops[0])


CONVERTERS: dict[str, Converter] = {"ROIAlign": convert_roi_align, "BoxGroupOutput": convert_box_group_output,
                                    "ScaleRoute": convert_scale_route, "DecodeBBox": convert_decode_bbox}
