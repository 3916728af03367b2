"""Dropout[scale_train]: caffe-fast-rcnn's Dropout, chosen only for layers that set scale_train."""

import numpy as np
import pytest

from caffe_core import registry, runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_extra_field
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import field_bytes, wire_fields
from caffe_layers_rcnn.dropout_scale_train import ScaleTrainDropoutLayer


def layer_text(scale_train=None, ratio=0.5):
    field = "" if scale_train is None else f" scale_train: {str(scale_train).lower()}"
    return (f'name: "drop" type: "Dropout" bottom: "x" top: "y" '
            f"dropout_param {{ dropout_ratio: {ratio}{field} }}")


def run(make_layer, blob_of, text, x, phase, top_diff):
    layer = make_layer(text, phase)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = top_diff
    layer.backward(top, [True], bottom)
    return layer, top[0].cpu_data().copy(), bottom[0].cpu_diff().copy()


def parse(text):
    return parse_text(text, caffe_pb2.LayerParameter())


def skip_without_std_dropout():
    if not any(p.distribution == "caffe-layers-std" for p in registry.providers_of("Dropout")):
        pytest.skip("needs caffe-layers-std's Dropout")


def test_accepts_only_layers_that_set_scale_train():
    assert ScaleTrainDropoutLayer.accepts(parse(layer_text(False)))
    assert ScaleTrainDropoutLayer.accepts(parse(layer_text(True)))
    assert not ScaleTrainDropoutLayer.accepts(parse(layer_text()))
    assert not ScaleTrainDropoutLayer.accepts(parse('type: "Dropout"'))


def test_factory_picks_it_only_with_scale_train():
    skip_without_std_dropout()
    assert registry.layer_class_for(parse(layer_text(False))) is ScaleTrainDropoutLayer
    assert registry.layer_class_for(parse(layer_text())).__module__ == "caffe_layers_std.neuron.dropout"


@pytest.mark.parametrize("ratio", [0.5, 0.25])
def test_test_phase_without_scale_train_multiplies_by_one_minus_ratio(make_layer, blob_of, ratio):
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    _, y, dx = run(make_layer, blob_of, layer_text(False, ratio), x, caffe_pb2.TEST, 2 * x)
    np.testing.assert_allclose(y, x * (1 - ratio), rtol=1e-6)
    np.testing.assert_allclose(dx, 2 * x * (1 - ratio), rtol=1e-6)


def test_alone_it_builds_every_dropout_with_bvlcs_semantics():
    # With no other Dropout provider the factory asks no one: scale_train's default (true) is BVLC's.
    if len(registry.providers_of("Dropout")) > 1:
        pytest.skip("another pack provides Dropout")
    assert registry.layer_class_for(parse(layer_text())) is ScaleTrainDropoutLayer


def test_test_phase_with_scale_train_passes_through(make_layer, blob_of):
    x = np.random.default_rng(2).normal(size=(3, 4)).astype(np.float32)
    _, y, dx = run(make_layer, blob_of, layer_text(True), x, caffe_pb2.TEST, x)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, x)


@pytest.mark.parametrize(("scale_train", "factor"), [(False, 1.0), (True, 1 / 0.75)])
def test_train_phase_masks_and_scales_only_with_scale_train(make_layer, blob_of, scale_train, factor):
    x = np.random.default_rng(3).normal(size=(50, 40)).astype(np.float32) + 5
    _, y, dx = run(make_layer, blob_of, layer_text(scale_train, 0.25), x, caffe_pb2.TRAIN, np.ones_like(x))
    kept = y != 0
    assert 0.7 < kept.mean() < 0.8
    np.testing.assert_allclose(y[kept], x[kept] * np.float32(factor), rtol=1e-6)
    np.testing.assert_allclose(dx, kept * np.float32(factor), rtol=1e-6)


def test_mask_is_the_std_packs_draw(make_layer, blob_of):
    skip_without_std_dropout()
    x = np.random.default_rng(4).normal(size=(6, 7)).astype(np.float32) + 3
    runtime.set_random_seed(11)
    _, ours, _ = run(make_layer, blob_of, layer_text(True, 0.3), x, caffe_pb2.TRAIN, x)
    runtime.set_random_seed(11)
    _, std, _ = run(make_layer, blob_of, layer_text(None, 0.3), x, caffe_pb2.TRAIN, x)
    np.testing.assert_array_equal(ours, std)


@pytest.mark.parametrize("scale_train", [False, True])
def test_gradient(make_layer, gaussian, scale_train):
    layer = make_layer(layer_text(scale_train))
    GradientChecker(1e-2, 1e-3).check_gradient_eltwise(layer, [gaussian((2, 3, 4))], [Blob()])


@pytest.mark.parametrize("ratio", [1.0, -0.1])
def test_refuses_a_ratio_outside_zero_one(make_layer, blob_of, ratio):
    with pytest.raises(LayerSetupError, match="dropout_param.dropout_ratio"):
        make_layer(layer_text(False, ratio)).setup([blob_of(np.ones(3))], [Blob()])


def test_field_text_and_wire_number():
    param = parse(layer_text(False))
    assert get_extra_field(param.dropout_param, "scale_train") is False
    assert get_extra_field(caffe_pb2.DropoutParameter(), "scale_train") is True
    block = param.dropout_param.SerializeToString()
    assert wire_fields(block)[2] == [0]
    assert wire_fields(param.SerializeToString())[108] == [block]
    fork = caffe_pb2.DropoutParameter.FromString(bytes([0x10, 0]))
    assert get_extra_field(fork, "scale_train") is False
    fork_layer = caffe_pb2.LayerParameter.FromString(field_bytes(108, bytes([0x10, 0])))
    assert ScaleTrainDropoutLayer.accepts(fork_layer)


@pytest.mark.gpu
@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_gpu_matches_cpu(gpu_matches_cpu, phase):
    x = np.random.default_rng(5).normal(size=(4, 5, 3))
    gpu_matches_cpu(layer_text(False, 0.3), [x], phase=phase)
