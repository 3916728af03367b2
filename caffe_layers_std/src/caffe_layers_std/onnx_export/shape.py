"""ONNX converters of the layers that move, pick or produce values without arithmetic."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from onnx import TensorProto

from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_std.common.batch_reindex import BatchReindexLayer
from caffe_layers_std.common.concat import ConcatLayer
from caffe_layers_std.common.parameter import ParameterLayer
from caffe_layers_std.common.silence import SilenceLayer
from caffe_layers_std.common.slice import SliceLayer
from caffe_layers_std.common.tile import TileLayer


def convert_concat(layer: ConcatLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Concat along `axis` (or the legacy concat_dim)."""
    graph.op("Concat", bottoms, tops[0], axis=layer.axis)


def convert_slice(layer: SliceLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Split along `axis` (or the legacy slice_dim) into the layer's section sizes."""
    graph.node("Split", [bottoms[0], graph.ints(layer.sizes, "split")], tops, axis=layer.axis)


def convert_to_top_shape(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Reshape to the top's static shape (Flatten and Reshape)."""
    graph.reshape(bottoms[0], graph.shape(tops[0]), tops[0])


def convert_tile(layer: TileLayer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Tile with `tiles` repeats along `axis`."""
    ndim = len(graph.shape(bottoms[0]))
    repeats = [1] * ndim
    repeats[layer.layer_param.tile_param.axis % ndim] = layer.tiles
    graph.op("Tile", [bottoms[0], graph.ints(repeats, "repeats")], tops[0])


def convert_silence(layer: SilenceLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Nothing: Silence has no tops."""


def convert_parameter(layer: ParameterLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """The layer's blob as an initializer, given the top's name by an Identity."""
    graph.identity(graph.constant(layer.blobs[0].cpu_data(), "value"), tops[0])


def convert_batch_reindex(layer: BatchReindexLayer, graph: OnnxGraph, bottoms: Sequence[str],
                          tops: Sequence[str]) -> None:
    """Gather of bottom 0's items at the (float-stored) indices of bottom 1."""
    indices = graph.op("Cast", [bottoms[1]], to=TensorProto.INT64)
    graph.op("Gather", [bottoms[0], indices], tops[0], axis=0)


CONVERTERS: dict[str, Callable[..., None]] = {
    "Concat": convert_concat,
    "Slice": convert_slice,
    "Flatten": convert_to_top_shape,
    "Reshape": convert_to_top_shape,
    "Tile": convert_tile,
    "Silence": convert_silence,
    "Parameter": convert_parameter,
    "BatchReindex": convert_batch_reindex,
}
