"""What Convolution and Deconvolution share: stored-blob checks, reshape refusals, which diffs backward
writes when only some gradients are wanted, and batches processed in chunks within the scratch budget."""

import threading

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_layers_vision import workspace
from caffe_layers_vision.workspace import shared_scratch

GAUSSIAN_FILLERS = "weight_filler { type: 'gaussian' std: 1 } bias_filler { type: 'gaussian' std: 1 }"
LAYER_TYPES = ["Convolution", "Deconvolution"]
BOTH_TYPES = pytest.mark.parametrize("layer_type", LAYER_TYPES)


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


# Geometries reaching each path: batch-innermost columns (narrow outputs) with the input gradient by col2im
# (more outputs than inputs) or as a convolution (fewer), batch-outermost columns (wide outputs, strides) read
# in place or through a padded copy, 1x1 products image by image, and three spatial axes.
CHUNKED = pytest.mark.parametrize(("shape", "params"), [
    ((5, 3, 6, 5), "num_output: 8 kernel_size: 3 pad: 1"),
    ((5, 6, 6, 5), "num_output: 4 kernel_size: 3 pad: 1 group: 2"),
    ((5, 1, 6, 20), "num_output: 8 kernel_size: 3"),
    ((5, 1, 6, 20), "num_output: 8 kernel_size: 3 pad: 1"),
    ((3, 2, 4, 140), "num_output: 2 kernel_size: 3 pad: 1"),
    ((5, 3, 7, 6), "num_output: 4 kernel_size: 3 stride: 2 pad: 1"),
    ((5, 4, 3, 3), "num_output: 3 kernel_size: 1"),
    ((3, 2, 4, 5, 4), "num_output: 3 kernel_size: 2 pad: 1 dilation: 2"),
])


def forward_backward(layer, bottom, top, top_diff):
    """Reshapes (choosing the chunks), runs forward and backward; the top, bottom diff and param diffs."""
    layer.reshape([bottom], [top])
    layer.forward([bottom], [top])
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 0
    top.mutable_cpu_diff()[...] = top_diff
    layer.backward([top], [True], [bottom])
    diffs = [blob.cpu_diff().copy() for blob in (bottom, *layer.blobs)]
    return [top.cpu_data().copy(), *diffs]


def chunk_budget(layer, images: int) -> int:
    """The scratch budget under which the layer takes `images` images per chunk."""
    return layer.scratch_bytes(images)


@BOTH_TYPES
@CHUNKED
def test_chunks_give_the_whole_batch_result(make_layer, gaussian, monkeypatch, layer_type, shape, params):
    layer = make_layer(layer_text(layer_type, params))
    bottom, top = gaussian(shape), Blob()
    layer.setup([bottom], [top])
    top_diff = gaussian(top.shape, seed=2).cpu_data()
    whole = forward_backward(layer, bottom, top, top_diff)
    assert layer.chunk == shape[0]
    monkeypatch.setattr(workspace, "SCRATCH_BUDGET_BYTES", chunk_budget(layer, 2))
    chunked = forward_backward(layer, bottom, top, top_diff)
    assert layer.chunk == 2
    for got, want in zip(chunked, whole, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize(("shape", "outputs"), [
    # 1024 points and 2 * 256 * 256 * 1024 > 1e8 flops an image: chunks of 2048 points, 2 images then 1.
    ((3, 256, 32, 32), 256),
    # One point and 2 * 200 * 100 flops an image: chunks of 1e8 flops, 2500 images then 500.
    ((3000, 100, 1, 1), 200),
])
def test_1x1_batch_larger_than_one_chunk(make_layer, gaussian, shape, outputs):
    """Whatever the chunks, each image's top is Caffe's 1x1 convolution: W times its pixels, plus the bias."""
    layer = make_layer(layer_text("Convolution", f"num_output: {outputs} kernel_size: 1"))
    bottom, top = gaussian(shape), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    weights, bias = layer.blobs[0].cpu_data()[:, :, 0, 0], layer.blobs[1].cpu_data()
    want = np.einsum("mc,nchw->nmhw", weights.astype(np.float64), bottom.cpu_data()) + bias[:, None, None]
    np.testing.assert_allclose(top.cpu_data(), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("layer_type", "shape", "params"), [
    *((layer_type, shape, params) for layer_type in LAYER_TYPES for shape, params in (
        ((3, 2, 3, 3), "num_output: 3 kernel_size: 3 pad: 1"),
        ((3, 4, 3, 3), "num_output: 2 kernel_size: 3 pad: 1 group: 2"),
        ((3, 2, 3, 3), "num_output: 2 kernel_size: 3 stride: 2 pad: 1"))),
    ("Convolution", (3, 1, 2, 24), "num_output: 3 kernel_size: 2"),
])
def test_gradient_in_chunks(make_layer, gaussian, monkeypatch, layer_type, shape, params):
    probe, bottom = make_layer(layer_text(layer_type, params)), gaussian(shape)
    probe.setup([bottom], [Blob()])
    monkeypatch.setattr(workspace, "SCRATCH_BUDGET_BYTES", chunk_budget(probe, 2))
    layer = make_layer(layer_text(layer_type, params))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [bottom], [Blob()])
    assert layer.chunk == 2


@BOTH_TYPES
def test_scratch_stays_within_the_budget(make_layer, gaussian, monkeypatch, layer_type):
    """A batch whose columns are many times the budget is processed in chunks that fit it."""
    budget = 256 * 2 ** 10
    monkeypatch.setattr(workspace, "SCRATCH_BUDGET_BYTES", budget)
    layer = make_layer(layer_text(layer_type, "num_output: 8 kernel_size: 3 pad: 1"))
    bottom, top = gaussian((16, 8, 24, 24)), Blob()
    layer.setup([bottom], [top])
    top.mutable_cpu_diff()[...] = 1
    held = {}

    def run() -> None:
        # A fresh thread starts with an empty shared scratch, so it holds only this layer's.
        layer.forward([bottom], [top])
        layer.backward([top], [True], [bottom])
        held["bytes"] = shared_scratch().nbytes()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    columns = 8 * 9 * bottom.count * 4
    assert columns > 10 * budget
    assert 0 < held["bytes"] <= budget
    assert layer.chunk < 16


@BOTH_TYPES
def test_chunks_stay_on_the_device(make_layer, gaussian, monkeypatch, gpu_standin, layer_type):
    """In GPU mode, forward and backward in chunks (col2im and convolution paths) copy nothing either way."""
    for params in ("num_output: 8 kernel_size: 3 pad: 1", "num_output: 2 kernel_size: 3 pad: 1"):
        layer = make_layer(layer_text(layer_type, params))
        bottom, top = gaussian((5, 4, 6, 5)), Blob()
        layer.setup([bottom], [top])
        monkeypatch.setattr(workspace, "SCRATCH_BUDGET_BYTES", chunk_budget(layer, 2))
        layer.reshape([bottom], [top])
        top.mutable_gpu_diff()[...] = 1
        layer.forward([bottom], [top])
        layer.backward([top], [True], [bottom])
        before = gpu_standin.transfers()
        layer.forward([bottom], [top])
        layer.backward([top], [True], [bottom])
        assert layer.chunk == 2
        assert (gpu_standin.transfers() - before).copies == 0
