"""A convolution's learnable blobs: weight and bias filled from convolution_param, or stored ones checked."""

from __future__ import annotations

from caffe_core.blob import Blob
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


def set_up_convolution_blobs(layer: Layer, conv: caffe_pb2.ConvolutionParameter,
                             weight_shape: tuple[int, ...], bias_shape: tuple[int, ...]) -> None:
    """Fills a new weight blob and, with bias_term, a bias blob, as Caffe's BaseConvolutionLayer::LayerSetUp;
    a layer that already has blobs (stored ones) gets them checked against these shapes instead."""
    bias_term = bool(conv.bias_term)
    if not layer.blobs:
        layer.blobs = [Blob(weight_shape)]
        get_filler(conv.weight_filler).fill(layer.blobs[0])
        if bias_term:
            layer.blobs.append(Blob(bias_shape))
            get_filler(conv.bias_filler).fill(layer.blobs[1])
        return
    expected = 1 + bias_term
    if len(layer.blobs) != expected:
        raise layer.error(f"incorrect number of weight blobs: expected {expected} "
                          f"(bias_term {str(bias_term).lower()}), got {len(layer.blobs)}")
    for name, blob, shape in zip(("weight", "bias"), layer.blobs, (weight_shape, bias_shape), strict=False):
        if blob.shape != shape:
            raise layer.error(f"incorrect {name} shape: expected shape {list(shape)}; "
                              f"instead, shape was {list(blob.shape)}")
