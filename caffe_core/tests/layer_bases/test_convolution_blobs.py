"""Convolution blobs: weight and bias filled from convolution_param's fillers, or stored ones checked."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import Layer
from caffe_core.layer_bases.convolution_blobs import set_up_convolution_blobs
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text

FILLERS = "weight_filler { type: 'constant' value: 2 } bias_filler { type: 'constant' value: 3 }"


def conv_layer(text: str = "") -> Layer:
    return Layer(parse_text(f"name: 'conv' type: 'Convolution' convolution_param {{ {FILLERS} {text} }}",
                            caffe_pb2.LayerParameter()))


def test_new_blobs_are_filled():
    layer = conv_layer()
    set_up_convolution_blobs(layer, layer.layer_param.convolution_param, (4, 1, 3, 3), (4,))
    assert [blob.shape for blob in layer.blobs] == [(4, 1, 3, 3), (4,)]
    assert (layer.blobs[0].cpu_data() == 2).all()
    assert (layer.blobs[1].cpu_data() == 3).all()


def test_no_bias_without_bias_term():
    layer = conv_layer("bias_term: false")
    set_up_convolution_blobs(layer, layer.layer_param.convolution_param, (2, 3, 1), (2,))
    assert [blob.shape for blob in layer.blobs] == [(2, 3, 1)]


def test_stored_blobs_are_kept():
    layer = conv_layer()
    layer.blobs = [Blob((4, 1, 3, 3)), Blob((4,))]
    set_up_convolution_blobs(layer, layer.layer_param.convolution_param, (4, 1, 3, 3), (4,))
    assert not np.any(layer.blobs[0].cpu_data())


@pytest.mark.parametrize(("text", "stored", "message"), [
    ("bias_term: false", [(4, 1, 3, 3), (4,)],
     r"'conv'.*weight blobs: expected 1 \(bias_term false\), got 2"),
    ("", [(4, 1, 3, 3)], r"weight blobs: expected 2 \(bias_term true\), got 1"),
    ("", [(4, 1, 2, 3), (4,)],
     r"incorrect weight shape: expected shape \[4, 1, 3, 3\]; instead, shape was \[4, 1, 2, 3\]"),
    ("", [(4, 1, 3, 3), (3,)], r"incorrect bias shape: expected shape \[4\]; instead, shape was \[3\]"),
])
def test_stored_blobs_are_checked(text, stored, message):
    layer = conv_layer(text)
    layer.blobs = [Blob(shape) for shape in stored]
    with pytest.raises(LayerSetupError, match=message):
        set_up_convolution_blobs(layer, layer.layer_param.convolution_param, (4, 1, 3, 3), (4,))
