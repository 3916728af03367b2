"""SegNet's Dropout with sample_weights_test: which layers it takes, Monte-Carlo dropout at TEST (a new mask
each forward, scaled by 1 / (1 - p), backward through the mask), BVLC's Dropout otherwise (equal to the std
pack's, when installed), gradients and the refused ratio."""

import numpy as np
import pytest

from caffe_core import proto_io, registry, runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.rng.caffe_stream import CaffeStream
from caffe_core.testing import GradientChecker
from caffe_layers_seg.sample_weights_test_dropout import SampleWeightsTestDropoutLayer


def layer_text(ratio=0.5, sample=True):
    field = "" if sample is None else f" sample_weights_test: {str(sample).lower()}"
    return f"name: 'drop' type: 'Dropout' dropout_param {{ dropout_ratio: {ratio}{field} }}"


def param_of(text):
    return proto_io.parse_text(text, caffe_pb2.LayerParameter())


def run(layer, x, seed):
    """Sets the layer up, forwards x with the seed, backwards a top diff of 3; returns (y, dx)."""
    bottom, top = [Blob(x.shape)], Blob()
    bottom[0].mutable_cpu_data()[...] = x
    layer.setup(bottom, [top])
    runtime.set_random_seed(seed)
    layer.forward(bottom, [top])
    top.mutable_cpu_diff()[...] = 3
    layer.backward([top], [True], bottom)
    return top.cpu_data().copy(), bottom[0].cpu_diff().copy()


@pytest.mark.parametrize(("text", "takes"), [
    (layer_text(sample=True), True),
    (layer_text(sample=False), True),
    (layer_text(sample=None), False),
    ("name: 'drop' type: 'Dropout'", False),
])
def test_takes_the_layers_that_set_sample_weights_test(text, takes):
    assert SampleWeightsTestDropoutLayer.accepts(param_of(text)) is takes
    if takes:
        assert registry.layer_class_for(param_of(text)) is SampleWeightsTestDropoutLayer


@pytest.mark.parametrize("ratio", [0.5, 0.3])
def test_test_phase_samples_a_mask_scaled_by_one_over_keep(make_layer, ratio):
    x = np.random.default_rng(1).standard_normal((4, 5, 6)).astype(np.float32)
    y, dx = run(make_layer(layer_text(ratio), caffe_pb2.TEST), x, seed=21)
    stored = float(np.float32(ratio))
    keep = CaffeStream(21).bernoulli(x.shape, 1.0 - stored)
    scale = np.float32(1 / (1 - stored))
    np.testing.assert_array_equal(y, np.where(keep, x * scale, 0))
    np.testing.assert_array_equal(dx, np.where(keep, 3 * scale, 0))
    assert 0 < keep.mean() < 1


def test_each_test_forward_draws_a_new_mask(make_layer, blob_of):
    bottom, top = [blob_of(np.ones((8, 8)))], Blob()
    layer = make_layer(layer_text(), caffe_pb2.TEST)
    layer.setup(bottom, [top])
    layer.forward(bottom, [top])
    first = top.cpu_data().copy()
    layer.forward(bottom, [top])
    assert not np.array_equal(top.cpu_data(), first)
    assert set(np.unique(first)) == {0, 2}


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_without_sample_weights_test_it_is_bvlcs_dropout(make_layer, phase):
    x = np.random.default_rng(2).standard_normal((3, 7)).astype(np.float32)
    y, dx = run(make_layer(layer_text(0.4, sample=False), phase), x, seed=8)
    if phase == caffe_pb2.TEST:
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(dx, np.full_like(x, 3))
    else:
        stored = float(np.float32(0.4))
        keep = CaffeStream(8).bernoulli(x.shape, 1.0 - stored)
        np.testing.assert_array_equal(y, np.where(keep, x * np.float32(1 / (1 - stored)), 0))


def std_dropout_class():
    """The std pack's Dropout class, or a skip when the std pack is not installed."""
    std = [p for p in registry.providers_of("Dropout") if p.distribution == "caffe-layers-std"]
    if not std:
        pytest.skip("needs caffe-layers-std's Dropout")
    return std[0].entry_point.load()


@pytest.mark.requires_layer_types("Dropout")
@pytest.mark.parametrize(("phase", "sample"), [(caffe_pb2.TRAIN, True), (caffe_pb2.TRAIN, False),
                                               (caffe_pb2.TEST, False)])
def test_numbers_equal_the_std_packs_dropout_where_they_agree(phase, sample):
    std = std_dropout_class()
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
    param = param_of(layer_text(0.3, sample))
    param.phase = phase
    plain = param_of(layer_text(0.3, sample=None))
    plain.phase = phase
    assert registry.layer_class_for(plain) is std
    ours, theirs = run(SampleWeightsTestDropoutLayer(param), x, 5), run(std(plain), x, 5)
    for mine, reference in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(mine, reference)


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_gradient(make_layer, blob_of, phase):
    bottom = [blob_of(np.random.default_rng(4).standard_normal((2, 3, 4, 5)))]
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(make_layer(layer_text(), phase), bottom, [Blob()])


def test_in_place_sampling_scales_the_kept_values(make_layer, blob_of):
    blob = blob_of(np.full((5, 5), 2.0))
    layer = make_layer(layer_text(0.5), caffe_pb2.TEST)
    layer.setup([blob], [blob])
    runtime.set_random_seed(6)
    layer.forward([blob], [blob])
    keep = CaffeStream(6).bernoulli((5, 5), 0.5)
    np.testing.assert_array_equal(blob.cpu_data(), np.where(keep, 4, 0))


@pytest.mark.parametrize("ratio", [1.0, -0.1])
def test_ratio_outside_zero_one_is_refused(make_layer, blob_of, ratio):
    with pytest.raises(LayerSetupError, match=r"'drop'.*dropout_param\.dropout_ratio must be in \[0, 1\)"):
        make_layer(layer_text(ratio)).setup([blob_of(np.ones(2))], [Blob()])


@pytest.mark.gpu
@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_gpu_matches_cpu(gpu_matches_cpu, phase):
    gpu_matches_cpu(layer_text(), [np.random.default_rng(3).standard_normal((2, 3, 4))], phase=phase)
