"""The CTC layers' converters, which refuse: the decoder's output length depends on the data, and the losses
and the sequence accuracy are training-only."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer
from caffe_core.onnx_export import OnnxGraph
from caffe_core.onnx_export.converters import Converter


def convert_greedy_decoder(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str],
                           tops: Sequence[str]) -> None:
    """Refused, naming the scores to export instead."""
    raise OnnxExportError(
        "CTCGreedyDecoder has no ONNX equivalent: merging repeats and dropping blanks moves each "
        "sequence's labels to data-dependent places (or, with labels, computes edit distances). Remove the "
        f"layer so that the net ends at its scores ({layer.layer_param.bottom[0]}), export that, and decode "
        "the argmax path outside the model")


def convert_ctc_loss(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """Refused: a training loss."""
    raise OnnxExportError(
        f"{layer.type} is a training loss (CTC's forward-backward over label alignments), which ONNX "
        "inference graphs do not express; export the deploy net, without the loss")


def convert_labelsequence_accuracy(layer: Layer, graph: OnnxGraph, bottoms: Sequence[str],
                                   tops: Sequence[str]) -> None:
    """Refused: a training-time metric over decoded sequences."""
    raise OnnxExportError(
        "LabelsequenceAccuracy compares decoded sequences (repeats merged, blanks dropped: data-dependent "
        "positions) with labels, a training-time metric; export the deploy net, without it")


CONVERTERS: dict[str, Converter] = {
    "CTCGreedyDecoder": convert_greedy_decoder,
    "CtcLoss": convert_ctc_loss,
    "WarpCTCLoss": convert_ctc_loss,
    "LabelsequenceAccuracy": convert_labelsequence_accuracy,
}
