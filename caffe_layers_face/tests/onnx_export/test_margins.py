"""ONNX export of face_b's layers: NormL2 and CosinAddm at TEST match onnxruntime; the label-driven
training layers are refused, naming the label bottom."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    net_from_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export

NEWEST = newest_opset()


@pytest.mark.parametrize("shape", [(2, 5), (3, 4, 2, 1)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_norm_l2(shape, opset):
    net = one_layer_net(layer_text("NormL2"), {"data": shape}, seed=3)
    model = assert_onnx_matches(net, opset)
    assert op_types(model) == ["Reshape", "ReduceSumSquare", "Add", "Sqrt", "Div", "Reshape"]


LABELLED = '''
layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 4 dim: 3 } } }
layer { name: "label" type: "Input" top: "label" input_param { shape { dim: 4 } } }
layer { name: "m" type: "%s" bottom: "x" bottom: "label" top: "y" %s }
'''


def test_cosin_add_m_at_test_is_the_identity():
    net = net_from_text(LABELLED % ("CosinAddm", "cosin_add_m_param { m: 0.5 }"), phase=caffe_pb2.TEST)
    net.blob_by_name("label").mutable_cpu_data()[...] = [0, 1, 2, 0]
    model = onnx_export.to_model(net)
    assert op_types(model) == ["Identity"]


@pytest.mark.parametrize(("kind", "params"), [
    ("CosinAddm", "cosin_add_m_param { m: 0.5 }"),
    ("CombinedMargin", ""),
    ("AdaCosAddmScale", "adacos_add_m_scale_param { num_classes: 3 }"),
    ("MarginInnerProduct", "margin_inner_product_param { num_output: 3 }"),
    ("CenterLoss", "center_loss_param { num_output: 3 }"),
])
def test_training_layers_are_refused(kind, params):
    net = net_from_text(LABELLED % (kind, params), phase=caffe_pb2.TRAIN)
    with pytest.raises(OnnxExportError, match=kind):
        onnx_export.to_model(net)
