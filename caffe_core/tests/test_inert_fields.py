"""Fields that change nothing here are named, with the reason, in the INFO log of the net that sets them."""

import logging

import pytest

from caffe_core.inert_fields import inert_field_notes
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


def notes(text):
    return inert_field_notes(parse_text(text, caffe_pb2.LayerParameter()))


@pytest.mark.parametrize(("text", "says"), [
    ("convolution_param { engine: CUDNN }", "convolution_param.engine: CUDNN selects cuDNN"),
    ("pooling_param { engine: CUDNN }", "pooling_param.engine: CUDNN selects cuDNN"),
    ("relu_param { engine: CUDNN }", "relu_param.engine: CUDNN"),
    ("convolution_param { force_nd_im2col: true }", "one im2col for any number of axes"),
    ("python_param { share_in_parallel: true }", "never read by Caffe 1.0"),
    ("recurrent_param { debug_info: true }", "without an unrolled net"),
    ("data_param { force_encoded_color: true }", "transform_param.force_color decides"),
])
def test_each_inert_field_gets_its_reason(text, says):
    (note,) = notes(text)
    assert says in note


@pytest.mark.parametrize("text", ["convolution_param { engine: CAFFE force_nd_im2col: false }",
                                  "pooling_param { engine: DEFAULT }", "data_param { batch_size: 2 }", ""])
def test_fields_left_at_caffes_defaults_say_nothing(text):
    assert notes(text) == []


def test_the_net_logs_the_notes_as_it_creates_the_layer(caplog):
    text = 'layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 } } ' \
           'convolution_param { engine: CUDNN } }'
    with caplog.at_level(logging.INFO, logger="caffe"):
        Net(parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    assert any(r.getMessage().startswith("Layer in: convolution_param.engine: CUDNN selects cuDNN")
               for r in caplog.records)
