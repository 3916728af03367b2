"""ONNX export of the ocr layers: onnxruntime gives Transpose's, Reverse's and ContinuationIndicator's own
outputs; the CTC decoder and losses are refused, saying why."""

import pytest

from caffe_core.errors import OnnxExportError
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


@pytest.mark.parametrize("dims", [[3, 2, 0, 1], [0, 2, 3, 1]])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_transpose(dims, opset):
    params = "transpose_param { " + " ".join(f"dim: {d}" for d in dims) + " }"
    net = one_layer_net(layer_text("Transpose", params), {"data": (2, 3, 1, 5)}, seed=1)
    assert op_types(assert_onnx_matches(net, opset)) == ["Transpose"]


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("opset", [13, NEWEST])
def test_reverse(axis, opset):
    params = f"reverse_param {{ axis: {axis} }}"
    net = one_layer_net(layer_text("Reverse", params), {"data": (4, 2, 3)}, seed=2)
    assert op_types(assert_onnx_matches(net, opset)) == ["Slice"]


def test_continuation_indicator():
    params = "continuation_indicator_param { time_step: 6 axis: 1 }"
    net = one_layer_net(layer_text("ContinuationIndicator", params), {"data": (6, 3, 4)}, seed=3)
    assert_onnx_matches(net, 13)


@pytest.mark.parametrize(("layer", "message", "scores"), [
    ('type: "CTCGreedyDecoder" bottom: "x" top: "y"', "CTCGreedyDecoder has no ONNX equivalent", (5, 2, 4)),
    ('type: "WarpCTCLoss" bottom: "x" bottom: "label" top: "y"', "training loss", (5, 2, 4)),
    ('type: "CtcLoss" bottom: "x" bottom: "label" top: "y" ctc_loss_param { alphabet_size: 4 time_step: 5 }',
     "training loss", (5, 2, 4)),
    ('type: "LabelsequenceAccuracy" bottom: "x" bottom: "label" top: "y"', "training-time metric", (2, 5, 4)),
])
def test_ctc_layers_are_refused(layer, message, scores):
    dims = " ".join(f"dim: {d}" for d in scores)
    net = net_from_text(
        f'layer {{ name: "in" type: "Input" top: "x" top: "label" input_param {{ shape {{ {dims} }} '
        'shape { dim: 2 dim: 3 } } } layer { name: "ctc" ' + layer + " }")
    with pytest.raises(OnnxExportError, match=message):
        onnx_export.to_model(net)
