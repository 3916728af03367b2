"""CosinAddm (arcface-caffe): its block, TRAIN forward and backward against the fork's kernels written as
loops, the linear branch past cos(pi - m), cosines of 1 left alone, TEST as the identity, in place, a
gradient check, refusals and GPU mode."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, param_blocks
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import wire_field_numbers

TEXT = ('name: "cosin_add_m" type: "CosinAddm" bottom: "fc6" bottom: "label" top: "fc6_margin" '
        'cosin_add_m_param { m: 0.5 }')


def data(seed=4):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.95, 0.95, size=(5, 6)).astype(np.float32)
    labels = np.array([0, 5, 2, 2, 3], np.float32)
    x[1, 5] = -0.95  # past cos(pi - 0.5) = -0.8776: the linear branch
    x[4, 3] = 1.0  # stays
    return x, labels


def run(make_layer, blob_of, text=TEXT, phase=caffe_pb2.TRAIN, in_place=False):
    x, labels = data()
    layer = make_layer(text.replace('top: "fc6_margin"', 'top: "fc6"') if in_place else text, phase=phase)
    bottom = [blob_of(x), blob_of(labels)]
    top = [bottom[0]] if in_place else [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, bottom, top


def test_block_number_and_defaults():
    assert param_blocks()["cosin_add_m_param"].number == 179
    param = parse_text(TEXT, caffe_pb2.LayerParameter())
    assert 179 in wire_field_numbers(param.SerializeToString())
    defaults = get_param_block(caffe_pb2.LayerParameter(), "cosin_add_m_param")
    assert (defaults.m, defaults.transform_test) == (0.5, False)


def test_train_matches_the_fork(make_layer, blob_of, fork_face):
    layer, bottom, top = run(make_layer, blob_of)
    dy = np.random.default_rng(1).normal(size=(5, 6)).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = dy
    layer.backward(top, [True, False], bottom)
    want, dx = fork_face.cosin_add_m(*data(), 0.5, dy)
    np.testing.assert_allclose(top[0].cpu_data(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-5, atol=1e-6)


def test_branches_by_hand(make_layer, blob_of):
    x, _ = data()
    _, _, top = run(make_layer, blob_of)
    y = top[0].cpu_data()
    assert y[0, 0] == pytest.approx(math.cos(math.acos(x[0, 0]) + 0.5), abs=1e-6)
    assert y[1, 5] == pytest.approx(-0.95 - 0.5 * math.sin(0.5), abs=1e-6)
    assert y[4, 3] == 1.0
    off = np.ones_like(x, dtype=bool)
    off[np.arange(5), [0, 5, 2, 2, 3]] = False
    np.testing.assert_array_equal(y[off], x[off])


def test_test_phase_is_the_identity(make_layer, blob_of):
    for transform_test in ("false", "true"):
        text = TEXT.replace("m: 0.5", f"m: 0.5 transform_test: {transform_test}")
        layer, bottom, top = run(make_layer, blob_of, text, phase=caffe_pb2.TEST)
        np.testing.assert_array_equal(top[0].cpu_data(), data()[0])


def test_in_place(make_layer, blob_of, fork_face):
    layer, bottom, top = run(make_layer, blob_of, in_place=True)
    want, dx = fork_face.cosin_add_m(*data(), 0.5, np.ones((5, 6), np.float32))
    np.testing.assert_allclose(top[0].cpu_data(), want, rtol=1e-6, atol=1e-6)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-5, atol=1e-6)


def test_gradient(make_layer, blob_of):
    x, labels = data()
    x[4, 3] = 0.3  # away from the kink at 1
    layer = make_layer(TEXT)
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(layer, [blob_of(x), blob_of(labels)],
                                                                 [Blob()], 0)


def test_refusals(make_layer, blob_of):
    x, labels = data()
    layer = make_layer(TEXT)
    with pytest.raises(LayerSetupError, match="one label per row"):
        layer.setup([blob_of(x), blob_of(labels[:4])], [Blob()])
    labels[0] = 6
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    with pytest.raises(LayerSetupError, match=r"outside \[0, 6\)"):
        layer.forward(bottom, top)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, list(data()), propagate_down=[True, False])
