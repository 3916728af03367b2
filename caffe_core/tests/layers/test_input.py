"""The core's Input layer: one shape for all tops or one per top; the caller fills the data."""

import pytest

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layers.input import InputLayer
from caffe_core.proto import caffe_pb2


def make(text: str) -> InputLayer:
    return InputLayer(proto_io.parse_text(text, caffe_pb2.LayerParameter()))


def test_one_shape_per_top():
    tops = [Blob(), Blob()]
    make('name: "in" type: "Input" top: "a" top: "b" input_param { shape { dim: 2 dim: 3 } '
         'shape { dim: 2 } }').setup([], tops)
    assert [t.shape for t in tops] == [(2, 3), (2,)]


def test_one_shape_for_every_top():
    tops = [Blob(), Blob()]
    make('name: "in" type: "Input" top: "a" top: "b" input_param { shape { dim: 4 } }').setup([], tops)
    assert [t.shape for t in tops] == [(4,), (4,)]


def test_forward_keeps_what_the_caller_wrote():
    top = Blob()
    layer = make('name: "in" type: "Input" top: "a" input_param { shape { dim: 2 } }')
    layer.setup([], [top])
    top.data[...] = [5, 6]
    layer.forward([], [top])
    assert top.data.tolist() == [5, 6]


def test_wrong_number_of_shapes_names_the_layer():
    layer = make('name: "in" type: "Input" top: "a" top: "b" top: "c" input_param { shape { dim: 1 } '
                 'shape { dim: 2 } }')
    with pytest.raises(LayerSetupError, match="layer 'in'.*0, 1 or 3"):
        layer.setup([], [Blob(), Blob(), Blob()])
