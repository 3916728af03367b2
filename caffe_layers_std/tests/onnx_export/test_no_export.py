"""Layer types with no ONNX meaning (losses, metrics, ...) are refused with a clear error."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import net_from_text, randomise

NET = """
layer { name: "scores" type: "Input" top: "scores" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "target" type: "Input" top: "target" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "scores" bottom: "target" top: "loss" }
"""


def test_loss_layer_has_no_export():
    from caffe_core import onnx_export

    net = net_from_text(NET)
    randomise(net, np.random.default_rng(0))
    with pytest.raises(OnnxExportError, match=r"layer 'loss' of type 'EuclideanLoss'.* has no ONNX export"):
        onnx_export.to_model(net)
