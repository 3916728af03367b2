"""Layer types with no ONNX meaning (losses, metrics, ...) are refused with a clear error."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import layer_text, one_layer_net, require_onnx

require_onnx()


def test_loss_layer_has_no_export():
    from caffe_core import onnx_export

    loss = layer_text("EuclideanLoss", bottoms=("scores", "target"), tops=("loss",), name="loss")
    net = one_layer_net(loss, {"scores": (2, 3), "target": (2, 3)})
    with pytest.raises(OnnxExportError, match=r"layer 'loss' of type 'EuclideanLoss'.* has no ONNX export"):
        onnx_export.to_model(net)
