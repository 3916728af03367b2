"""What Convolution and Deconvolution share: stored-blob checks, reshape refusals, and which diffs backward
writes when only some gradients are wanted."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError

GAUSSIAN_FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"
BOTH_TYPES = pytest.mark.parametrize("layer_type", ["Convolution", "Deconvolution"])


def layer_text(layer_type: str, params: str) -> str:
    """A layer of this type named 'conv' with this convolution_param text and Gaussian fillers."""
    return f"name: 'conv' type: '{layer_type}' convolution_param {{ {params} {GAUSSIAN_FILLERS} }}"


@BOTH_TYPES
def test_stored_weights_must_match(make_layer, gaussian, layer_type):
    layer = make_layer(layer_text(layer_type, "num_output: 3 kernel_size: 3"))
    layer.blobs = [Blob((3, 3, 2, 2)), Blob((3,))]
    with pytest.raises(LayerSetupError, match=rf"layer 'conv' \(type {layer_type}\).*incorrect weight shape"):
        layer.setup([gaussian((2, 3, 6, 4))], [Blob()])


@BOTH_TYPES
def test_stored_blob_count_must_match_bias_term(make_layer, gaussian, layer_type):
    layer = make_layer(layer_text(layer_type, "num_output: 3 kernel_size: 3 bias_term: false"))
    layer.blobs = [Blob((3, 3, 3, 3)), Blob((3,))]
    with pytest.raises(LayerSetupError, match=r"expected 1 \(bias_term false\), got 2"):
        layer.setup([gaussian((2, 3, 6, 4))], [Blob()])


@BOTH_TYPES
def test_channel_change_after_setup_is_refused(make_layer, gaussian, layer_type):
    layer, top = make_layer(layer_text(layer_type, "num_output: 2 kernel_size: 3")), Blob()
    layer.setup([gaussian((2, 3, 6, 4))], [top])
    with pytest.raises(LayerSetupError, match="expected 3 channels, got 4"):
        layer.reshape([gaussian((2, 4, 6, 4))], [top])


@BOTH_TYPES
def test_bottoms_must_share_a_shape(make_layer, gaussian, layer_type):
    layer = make_layer(layer_text(layer_type, "num_output: 2 kernel_size: 3"))
    with pytest.raises(LayerSetupError, match=r"bottom 1 is \[2, 3, 6, 5\], bottom 0 is \[2, 3, 6, 4\]"):
        layer.setup([gaussian((2, 3, 6, 4)), gaussian((2, 3, 6, 5))], [Blob(), Blob()])


@BOTH_TYPES
@pytest.mark.parametrize(("weights", "bias", "to_bottom"), [
    (True, False, False), (False, True, False), (False, False, True), (False, False, False),
])
def test_backward_writes_only_the_wanted_diffs(make_layer, gaussian, layer_type, weights, bias, to_bottom):
    """Untouched diffs keep a marker value; the wanted ones change (param diffs accumulate onto it)."""
    layer = make_layer(layer_text(layer_type, "num_output: 2 kernel_size: 3"))
    bottom, top = gaussian((2, 3, 6, 4)), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    layer.set_param_propagate_down(0, weights)
    layer.set_param_propagate_down(1, bias)
    for blob in (bottom, *layer.blobs):
        blob.mutable_cpu_diff()[...] = 7
    top.mutable_cpu_diff()[...] = gaussian(top.shape, seed=2).cpu_data()
    layer.backward([top], [to_bottom], [bottom])
    for blob, wanted in ((layer.blobs[0], weights), (layer.blobs[1], bias), (bottom, to_bottom)):
        assert (blob.cpu_diff() == 7).all() != wanted
    if bias:
        summed = top.cpu_diff().sum(axis=(0, 2, 3))
        np.testing.assert_allclose(layer.blobs[1].cpu_diff(), 7 + summed, rtol=1e-5)
