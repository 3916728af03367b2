"""ONNX converters of the SSD layers for inference: Normalize, Permute, PriorBox; DetectionOutput (and its
RefineDet and TextBoxes++ variants) refuses."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_layers_ssd.detection_output import DetectionOutputLayer
from caffe_layers_ssd.normalize import NormalizeLayer
from caffe_layers_ssd.permute import PermuteLayer
from caffe_layers_ssd.prior_box import PriorBoxLayer


def convert_normalize(layer: NormalizeLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """x / sqrt(sum x^2 + eps) * scale, the sum over all but the batch axis or over channels only."""
    rank = len(graph.shape(bottoms[0]))
    axes = list(range(1, rank)) if layer.across_spatial else [1]
    squares = graph.reduce("ReduceSumSquare", bottoms[0], axes, keepdims=True)
    norm = graph.op("Sqrt", [graph.op("Add", [squares, graph.constant(np.float32(layer.eps), "eps")])])
    normalised = graph.op("Div", [bottoms[0], norm])
    scale = layer.blobs[0].cpu_data()
    if not layer.channel_shared:
        scale = scale.reshape((-1,) + (1,) * (rank - 2))
    graph.op("Mul", [normalised, graph.constant(scale, "scale")], tops[0])


def convert_permute(layer: PermuteLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Transpose by the layer's completed order (the axes the param leaves out follow in their order)."""
    if layer.need_permute:
        graph.op("Transpose", bottoms, tops[0], perm=list(layer.order))
    else:
        graph.identity(bottoms[0], tops[0])


def convert_prior_box(layer: PriorBoxLayer, graph: OnnxGraph, bottoms: Sequence[str],
                      tops: Sequence[str]) -> None:
    """A Constant: the priors depend only on the (static) shapes of the bottoms, not on their data."""
    from onnx import numpy_helper

    # forward_cpu reads nothing of the bottoms but their shapes, so empty blobs of those shapes suffice.
    top = Blob(graph.shape(tops[0]))
    layer.forward_cpu([Blob(graph.shape(name)) for name in bottoms], [top])
    priors = np.array(top.cpu_data(), dtype=np.float32)
    graph.op("Constant", [], tops[0], value=numpy_helper.from_array(priors))


def convert_detection_output(layer: DetectionOutputLayer, graph: OnnxGraph, bottoms: Sequence[str],
                             tops: Sequence[str]) -> None:
    """Refused: the fork's decode, per-class NMS and keep_top_k have no exact ONNX equivalent."""
    raise OnnxExportError(
        "DetectionOutput has no exact ONNX equivalent: its per-class NMS (with eta and top_k), keep_top_k "
        "across classes and its [1, 1, N, 7] top whose N depends on the data (a -1 row per image when "
        "nothing is found) cannot be written with ONNX's NonMaxSuppression. Remove the layer so that the net "
        f"ends at its bottoms ({', '.join(layer.layer_param.bottom)}; in SSD's nets mbox_loc, "
        "mbox_conf_flatten and mbox_priorbox), export that, and decode the boxes and run the NMS outside the "
        "ONNX model")


def convert_refinedet_detection_output(layer: DetectionOutputLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                      tops: Sequence[str]) -> None:
    """Refused: RefineDet's objectness filter and cascaded decode end in SSD's NMS and keep_top_k."""
    raise OnnxExportError(
        "DetectionOutput (RefineDet's) has no exact ONNX equivalent: after its objectness filtering "
        "(arm_conf) and cascaded decoding (arm_loc) it runs SSD's per-class NMS (with eta and top_k) and "
        "keep_top_k across classes into a [1, 1, N, 7] top whose N depends on the data, which ONNX's "
        "NonMaxSuppression cannot express. Remove the layer so that the net ends at its bottoms "
        f"({', '.join(layer.layer_param.bottom)}; in RefineDet's nets odm_loc, odm_conf_flatten, "
        "arm_priorbox, arm_conf_flatten and arm_loc), export that, and filter, decode and run the NMS "
        "outside the ONNX model")


def convert_textboxes_detection_output(layer: DetectionOutputLayer, graph: OnnxGraph, bottoms: Sequence[str],
                                       tops: Sequence[str]) -> None:
    """Refused: TextBoxes++'s rows come out of SSD's per-class NMS and keep_top_k."""
    raise OnnxExportError(
        "DetectionOutput (TextBoxes++'s) has no exact ONNX equivalent: its per-class NMS (with eta and "
        "top_k) on the horizontal boxes and keep_top_k across classes give a "
        f"[1, 1, N, {layer.row_width}] top whose N depends on the data, which ONNX's NonMaxSuppression "
        "cannot express. Remove the layer so that the net ends at its bottoms "
        f"({', '.join(layer.layer_param.bottom)}), export that, and decode the boxes and quadrilaterals and "
        "run the NMS outside the ONNX model")


CONVERTERS: dict[str, Converter] = {
    "Normalize": convert_normalize,
    "Permute": convert_permute,
    "PriorBox": convert_prior_box,
    "PriorBox[faceboxes]": convert_prior_box,
    "DetectionOutput": convert_detection_output,
    "DetectionOutput[refinedet]": convert_refinedet_detection_output,
    "DetectionOutput[textboxes]": convert_textboxes_detection_output,
}
