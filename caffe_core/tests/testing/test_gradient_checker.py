"""GradientChecker's check_params: learnable blobs are checked by default and left out on request."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing.gradient_checker import GradientChecker, GradientCheckError

IP = ('name: "ip" type: "InnerProduct" inner_product_param { num_output: 2 '
      'weight_filler { type: "gaussian" } bias_filler { type: "gaussian" } }')


@pytest.mark.requires_layer_types("InnerProduct")
def test_check_params_false_leaves_a_wrong_param_diff_unchecked(make_layer, blob_of):
    layer = make_layer(IP)
    bottom = [blob_of(np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32))]
    top = [Blob()]
    layer.setup(bottom, top)
    backward = layer.backward

    def with_wrong_param_diffs(top_, propagate_down, bottom_):
        backward(top_, propagate_down, bottom_)
        for blob in layer.blobs:
            blob.mutable_cpu_diff()[...] += 1.0

    layer.backward = with_wrong_param_diffs
    GradientChecker(1e-2, 1e-3, check_params=False).check_gradient_single(layer, bottom, top, 0, -1, -1)
    with pytest.raises(GradientCheckError, match="param 0"):
        GradientChecker(1e-2, 1e-3).check_gradient_single(layer, bottom, top, 0, -1, -1)
