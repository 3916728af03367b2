"""The ONNX export refuses MultiStageMeanfield (CRF as RNN), naming the layer and saying why."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import layer_text, one_layer_net, require_onnx

require_onnx()


def test_multi_stage_meanfield_is_refused():
    from caffe_core import onnx_export

    text = layer_text("MultiStageMeanfield", "multi_stage_meanfield_param { num_iterations: 2 }",
                      ["unary", "q0", "image"], ["pred"])
    net = one_layer_net(text, {"unary": (1, 3, 4, 5), "q0": (1, 3, 4, 5), "image": (1, 3, 4, 5)}, 2)
    with pytest.raises(OnnxExportError, match="MultiStageMeanfield.*permutohedral lattices"):
        onnx_export.to_model(net)
