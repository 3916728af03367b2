"""ONNX export of happynear's layers: onnxruntime gives Flip's, Normalize's, ChannelScale's,
LabelSpecificAdd's (TEST) and InnerProduct[happynear]'s own outputs; training-time tops are refused,
saying why."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.proto import caffe_pb2
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    require_onnx,
)

require_onnx()

NEWEST = newest_opset()


@pytest.mark.parametrize("params", ["", "flip_param { flip_height: true }",
                                    "flip_param { flip_width: false flip_height: true }",
                                    "flip_param { flip_width: false }"])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_flip(params, opset):
    assert_onnx_matches(one_layer_net(layer_text("Flip", params), {"data": (2, 3, 4, 5)}, seed=1), opset)


@pytest.mark.parametrize(("kind", "shape", "tops"), [("L2", (2, 6), 1), ("L2", (2, 3, 2, 2), 2),
                                                     ("L1", (2, 5, 3, 1), 2)])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_normalize(kind, shape, tops, opset):
    names = ("out", "norm")[:tops]
    text = layer_text("Normalize", f'normalize_param {{ normalize_type: "{kind}" }}', tops=names)
    assert_onnx_matches(one_layer_net(text, {"data": shape}, seed=2), opset)


@pytest.mark.parametrize("opset", [13, NEWEST])
def test_channel_scale(opset):
    text = layer_text("ChannelScale", bottoms=("data", "scale"))
    assert_onnx_matches(one_layer_net(text, {"data": (2, 3, 2, 2), "scale": (2, 1, 2, 2)}, seed=3), opset)


def test_label_specific_add_is_identity_at_test():
    text = layer_text("LabelSpecificAdd", "label_specific_add_param { bias: -0.35 }",
                      bottoms=("data", "label"))
    net = one_layer_net(text, {"data": (3, 4), "label": (3,)}, seed=4)
    assert_onnx_matches(net, NEWEST)


def test_label_specific_add_refuses_train(tmp_path):
    from caffe_core import onnx_export

    text = layer_text("LabelSpecificAdd", "label_specific_add_param { bias: -0.35 }",
                      bottoms=("data", "label"))
    net = one_layer_net(text, {"data": (3, 4), "label": (3,)}, seed=4, phase=caffe_pb2.TRAIN)
    with pytest.raises(OnnxExportError, match="training-time"):
        onnx_export.export(net, str(tmp_path / "m.onnx"), opset=NEWEST)


@pytest.mark.parametrize("bias", ["bias_term: false", ""])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_normalized_inner_product(bias, opset):
    text = layer_text("InnerProduct", f"inner_product_param {{ num_output: 4 normalize: true {bias} }}")
    assert_onnx_matches(one_layer_net(text, {"data": (2, 3, 2, 1)}, seed=5), opset)
