"""ONNX export of PSANet's PointwiseSpatialAttention: onnxruntime gives the layer's numbers in both modes,
with and without the Softmax, with the default and an explicit mask size."""

import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()


@pytest.mark.parametrize(("params", "mask_channels", "softmax"), [
    ("psa_type: COLLECT is_softmax: true normalization_factor: 1.0", 35, True),
    ("psa_type: DISTRIBUTE is_softmax: true", 35, True),
    ("psa_type: COLLECT attention_mask_height: 3 attention_mask_width: 5 normalization_factor: 2.5", 15,
     False),
    ("psa_type: DISTRIBUTE attention_mask_height: 5 attention_mask_width: 3 is_softmax: true", 15, True),
])
def test_matches_onnxruntime(params, mask_channels, softmax):
    layer = layer_text("PointwiseSpatialAttention", f"pointwise_spatial_attention_param {{ {params} }}",
                       bottoms=("x", "mask"), name="psa")
    net = one_layer_net(layer, {"x": (2, 3, 3, 4), "mask": (2, mask_channels, 3, 4)}, 3)
    model = assert_onnx_matches(net)
    assert ("Softmax" in op_types(model)) == softmax
    assert "Gather" in op_types(model) and "MatMul" in op_types(model)
