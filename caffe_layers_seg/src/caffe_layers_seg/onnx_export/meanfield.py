"""The refusal of MultiStageMeanfield (CRF as RNN) by the ONNX export."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_seg.multi_stage_meanfield import MultiStageMeanfieldLayer


def convert_multi_stage_meanfield(layer: MultiStageMeanfieldLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                  tops: Sequence[str]) -> None:
    """Refused: the bilateral lattice is a hash table built from the image at run time."""
    raise OnnxExportError("MultiStageMeanfield filters on permutohedral lattices whose points (a hash "
                          "of integer keys, with neighbour look-ups) are built from each image at run time; "
                          "this pack has no ONNX form of that: export the net up to the CRF's unary input "
                          "and run the CRF with caffe-py")


CONVERTERS: dict[str, Callable[..., None]] = {"MultiStageMeanfield": convert_multi_stage_meanfield}
