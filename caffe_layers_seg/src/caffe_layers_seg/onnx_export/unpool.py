"""ONNX converters of the pack's mask unpooling: Upsample[unpool] (SegNet, ENet) and MaxUnPool (inisis)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnx import TensorProto

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_seg.unpool_ops import MaskUnpoolLayer


def convert_mask_unpool(layer: MaskUnpoolLayer, graph: OnnxGraph, bottoms: Sequence[str],
                        tops: Sequence[str]) -> None:
    """ScatterElements of each (num, channel) plane's values into a zeroed plane at their mask positions.

    The mask holds float positions h * W_out + w within the value's own output plane, which is what
    ScatterElements along the flattened plane axis takes (MaxUnpool wants positions in the whole tensor).
    """
    num, channels, height, width = graph.shape(bottoms[0])
    assert layer.out_size is not None  # set by reshape, which a built net has run
    plane = layer.out_size[0] * layer.out_size[1]
    values = graph.reshape(bottoms[0], (num, channels, height * width))
    # Cast truncates toward zero, as the forks' float-to-int conversion of the mask.
    positions = graph.op("Cast", [graph.reshape(bottoms[1], (num, channels, height * width))],
                         to=TensorProto.INT64)
    zeros = graph.op("ConstantOfShape", [graph.ints([num, channels, plane], "plane_shape")])
    # ONNX leaves the result of repeated positions unspecified; onnxruntime writes in order, so the last
    # value stays, as in the forks' loops.
    scattered = graph.op("ScatterElements", [zeros, positions, values], axis=2)
    graph.reshape(scattered, graph.shape(tops[0]), tops[0])


CONVERTERS: dict[str, Callable[..., None]] = {
    "Upsample[unpool]": convert_mask_unpool,
    "MaxUnPool": convert_mask_unpool,
}
