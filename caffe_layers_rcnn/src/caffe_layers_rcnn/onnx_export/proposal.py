"""The Proposal layer's converter, which refuses: its sort and greedy NMS depend on the data."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_rcnn.inisis_proposal_layer import ProposalLayer


def convert_proposal(layer: ProposalLayer, graph: OnnxGraph, bottoms: Sequence[str],
                     tops: Sequence[str]) -> None:
    """Refused: the number of rois and their order come from a data-dependent sort, clip and greedy NMS."""
    raise OnnxExportError(
        "Proposal has no exact ONNX equivalent: its pre_nms_topn sort, min_size filter and the fork's greedy "
        "NMS (with its own overlap arithmetic) give a data-dependent number of rois that ONNX's "
        "NonMaxSuppression does not reproduce. Remove the layer so that the net ends at its bottoms "
        f"({', '.join(layer.layer_param.bottom)}: the objectness scores, box deltas and im_info), export "
        "that, and make the proposals outside the ONNX model")


CONVERTERS: dict[str, Converter] = {"Proposal": convert_proposal}
