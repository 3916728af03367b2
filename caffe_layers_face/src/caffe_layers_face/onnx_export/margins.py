"""face_b's layers' converters: NormL2 as ReduceSumSquare/Sqrt/Div; CosinAddm at TEST as the identity; the
label-driven training layers refuse, saying what to export instead."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter
from caffe_core.proto import caffe_pb2
from caffe_layers_face.norm_l2 import EPS, NormL2Layer


def convert_norm_l2(layer: NormL2Layer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """y = x / sqrt(sum x^2 + 1e-7) over each sample, reshaped to the top's 4-axis shape."""
    top_shape = graph.shape(tops[0])
    flat = graph.reshape(bottoms[0], [top_shape[0], -1])
    squares = graph.reduce("ReduceSumSquare", flat, [1], keepdims=True)
    norm = graph.op("Sqrt", [graph.op("Add", [squares, graph.constant(EPS, "eps")])])
    graph.reshape(graph.op("Div", [flat, norm]), top_shape, tops[0])


def convert_cosin_add_m(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """TEST: the identity (the fork's Forward_gpu); TRAIN refused (the margin needs the labels)."""
    if layer.phase != caffe_pb2.TEST:
        raise OnnxExportError("CosinAddm changes the label's logit only in TRAIN, from the label bottom; "
                              "export the TEST net, where the layer is the identity")
    graph.identity(bottoms[0], tops[0])


def convert_label_margin(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Refused: the layer's output depends on the label (and, for some, on state across batches)."""
    raise OnnxExportError(
        f"{layer.type} is a training layer: its output depends on the label bottom "
        f"({', '.join(layer.layer_param.bottom[1:])}), which an inference model does not have. Export the "
        f"deploy net, which ends at the features ({layer.layer_param.bottom[0]}), and compare them by cosine")


CONVERTERS: dict[str, Converter] = {
    "NormL2": convert_norm_l2,
    "CosinAddm": convert_cosin_add_m,
    "MarginInnerProduct": convert_label_margin,
    "CenterLoss": convert_label_margin,
    "CombinedMargin": convert_label_margin,
    "AdaCosAddmScale": convert_label_margin,
}
