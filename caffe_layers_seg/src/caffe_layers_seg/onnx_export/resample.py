"""ONNX converters of the pack's resampling layers: Upsample[nearest], Interp, BilinearInterpolate, Resize,
PixelShuffle and Pad."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_seg.bilinear_interpolate import BilinearInterpolateLayer
from caffe_layers_seg.interp import InterpLayer
from caffe_layers_seg.pad import PadLayer
from caffe_layers_seg.params import PadParameter
from caffe_layers_seg.pixel_shuffle import PixelShuffleLayer
from caffe_layers_seg.resize import ResizeLayer
from caffe_layers_seg.upsample_nearest import NearestUpsampleLayer

F32 = np.float32
PAD_MODES = {PadParameter.CONSTANT: "constant", PadParameter.REPLICATE: "edge",
             PadParameter.REFLECT: "reflect"}


def _resize_linear(graph: OnnxGraph, x: str, top: str, mode: str, output: str | None = None) -> str:
    """Resize (linear) to the top's shape, source coordinates by coordinate_transformation_mode `mode`."""
    sizes = graph.ints(graph.shape(top), "sizes")
    return graph.op("Resize", [x, "", "", sizes], output, mode="linear", coordinate_transformation_mode=mode)


def _slice(graph: OnnxGraph, x: str, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int],
           output: str | None = None) -> str:
    """x[starts:ends] along `axes`."""
    inputs = [x, graph.ints(starts, "starts"), graph.ints(ends, "ends"), graph.ints(axes, "axes")]
    return graph.op("Slice", inputs, output)


def convert_upsample_nearest(layer: NearestUpsampleLayer, graph: OnnxGraph, bottoms: Sequence[str],
                             tops: Sequence[str]) -> None:
    """Resize (nearest, asymmetric, floor) by the integer scale: y[h, w] = x[h // scale, w // scale]."""
    if layer.scale == 1:
        graph.identity(bottoms[0], tops[0])
        return
    scales = [1.0, 1.0] + [float(layer.scale)] * (layer.dims_num - 2)
    graph.op("Resize", [bottoms[0], "", graph.constant(np.asarray(scales, dtype=F32), "scales")], tops[0],
             mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")


def convert_interp(layer: InterpLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Slice for the crop (non-positive pad_beg / pad_end), then Resize (linear, align_corners)."""
    x = bottoms[0]
    if layer.pad_beg or layer.pad_end:
        start = -layer.pad_beg
        x = _slice(graph, x, [2, 3], [start, start], [start + size for size in layer.eff_size])
    if layer.eff_size == layer.out_size:
        graph.identity(x, tops[0])
        return
    _resize_linear(graph, x, tops[0], "align_corners", tops[0])


def convert_bilinear_interpolate(layer: BilinearInterpolateLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                 tops: Sequence[str]) -> None:
    """Resize (linear) with align_corners, or half_pixel (whose clamping to the edges is inisis')."""
    mode = "align_corners" if layer.align_corners else "half_pixel"
    _resize_linear(graph, bottoms[0], tops[0], mode, tops[0])


def convert_resize(layer: ResizeLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Resize (linear, asymmetric: source = index * src / dst), times inisis' edge darkening.

    Where the next neighbour lies past the last row (column), inisis drops it without renormalising, so
    the output there is (1 - frac) times ONNX's, which clamps to the last row: a per-row (per-column) factor.
    """
    factors: list[str] = []
    for (first, following, weight, _), shape in ((layer.rows, (-1, 1)), (layer.cols, (-1,))):
        factor = np.where(following == first, weight, F32(1)).astype(F32)
        if (factor != 1).any():
            factors.append(graph.constant(factor.reshape(shape), "edge_factor"))
    y = _resize_linear(graph, bottoms[0], tops[0], "asymmetric", None if factors else tops[0])
    for index, edge_factor in enumerate(factors):
        y = graph.op("Mul", [y, edge_factor], tops[0] if index == len(factors) - 1 else None)


def convert_pixel_shuffle(layer: PixelShuffleLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """DepthToSpace (CRD: channel c r^2 + i r + j goes to (c, h r + i, w r + j)) of the channels it uses."""
    r = layer.factor
    used = graph.shape(tops[0])[1] * r * r
    if not used:
        raise OnnxExportError(f"the input's {graph.shape(bottoms[0])[1]} channels are fewer than "
                              f"upscale_factor^2 = {r * r}: the top is empty, which ONNX cannot shuffle")
    x = bottoms[0]
    if used != graph.shape(x)[1]:
        # inisis only needs C to be a multiple of r: the channels past C // r^2 * r^2 are left unused.
        x = _slice(graph, x, [1], [0], [used])
    graph.op("DepthToSpace", [x], tops[0], blocksize=r, mode="CRD")


def convert_pad(layer: PadLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Slice (four negative pads), else Pad constant / edge / reflect; Gather for inisis' long reflections."""
    up, down, left, right = layer.pads
    height, width = graph.shape(bottoms[0])[2:]
    if layer.crop:
        _slice(graph, bottoms[0], [2, 3], [-up, -left], [height + down, width + right], tops[0])
        return
    if not any(layer.pads):
        graph.identity(bottoms[0], tops[0])
        return
    if layer.mode == PadParameter.REFLECT and (down > height - 1 or right > width - 1):
        # inisis reflects from the output, so a pad longer than the input minus one reflects the first pad:
        # beyond ONNX's reflect, but a Gather of each output row's and column's source is exact.
        rows = graph.op("Gather", [bottoms[0], graph.ints(layer.rows.tolist(), "rows")], axis=2)
        graph.op("Gather", [rows, graph.ints(layer.cols.tolist(), "cols")], tops[0], axis=3)
        return
    inputs = [bottoms[0], graph.ints([0, 0, up, left, 0, 0, down, right], "pads")]
    if layer.mode == PadParameter.CONSTANT:
        inputs.append(graph.constant(np.float32(layer.value), "value"))
    graph.op("Pad", inputs, tops[0], mode=PAD_MODES[layer.mode])


CONVERTERS: dict[str, Callable[..., None]] = {
    "Upsample[nearest]": convert_upsample_nearest,
    "Interp": convert_interp,
    "BilinearInterpolate": convert_bilinear_interpolate,
    "Resize": convert_resize,
    "PixelShuffle": convert_pixel_shuffle,
    "Pad": convert_pad,
}
