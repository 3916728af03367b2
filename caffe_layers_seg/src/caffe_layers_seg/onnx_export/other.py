"""ONNX converters of SegNet's Dropout with sample_weights_test, and DenseImageData's refusal."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_layers_seg.dense_image_data import DenseImageDataLayer
from caffe_layers_seg.sample_weights_test_dropout import SampleWeightsTestDropoutLayer


def convert_dropout(layer: SampleWeightsTestDropoutLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """Identity where the layer copies; Dropout with training_mode true where it samples.

    The layer samples in TRAIN, and in TEST with sample_weights_test (SegNet's Monte-Carlo dropout): ONNX's
    training-mode Dropout draws a new mask at every run and scales the kept values by 1 / (1 - ratio) as the
    layer does, from another random source.
    """
    if not layer.sampling:
        graph.identity(bottoms[0], tops[0])
        return
    ratio = graph.constant(np.float32(layer.ratio), "ratio")
    training = graph.constant(True, "training_mode", dtype=np.bool_)
    graph.op("Dropout", [bottoms[0], ratio, training], tops[0])


def convert_dense_image_data(layer: DenseImageDataLayer, graph: OnnxGraph, bottoms: Sequence[str],
                             tops: Sequence[str]) -> None:
    """Refused: a data layer reads image files, which an ONNX graph cannot."""
    raise OnnxExportError("DenseImageData reads image and label files from its list file, which an ONNX "
                          "graph cannot: replace it with an Input layer of the image batch's shape to export "
                          "the net")


CONVERTERS: dict[str, Callable[..., None]] = {
    "Dropout[sample_weights_test]": convert_dropout,
    "DenseImageData": convert_dense_image_data,
}
