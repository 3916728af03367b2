"""ONNX converter of Crop: a Slice with static starts and ends."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.onnx_export import OnnxGraph
from caffe_layers_vision.crop import CropLayer


def convert_crop(layer: CropLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Slices bottom 0 to the window reshape computed; the reference bottom gives only its shape."""
    axes = range(layer.start_axis, len(layer.window))
    starts = [layer.window[axis].start for axis in axes]
    ends = [layer.window[axis].stop for axis in axes]
    graph.op("Slice", [bottoms[0], graph.ints(starts, "starts"), graph.ints(ends, "ends"),
                       graph.ints(list(axes), "axes")], tops[0])


CONVERTERS = {"Crop": convert_crop}
