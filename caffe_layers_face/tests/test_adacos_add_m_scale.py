"""AdaCosAddmScale (arcface-caffe): its block, forward and backward against the fork's Forward_cpu/
Backward_cpu loops over three forwards (the scale carries from one forward to the next), the label entries'
margin branches, rows with a negative label, a gradient check with the scale held, refusals and GPU mode."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, param_blocks
from caffe_core.testing.wire import wire_field_numbers

TEXT = ('name: "adacos" type: "AdaCosAddmScale" bottom: "fc6" bottom: "label" top: "fc6_margin_scale" '
        'adacos_add_m_scale_param { m: 0.5 num_classes: 10575 }')


def data(seed=8):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.9, 0.9, size=(5, 6)).astype(np.float32)
    x[1, 4] = -0.95  # past cos(pi - 0.5): the linear branch
    x[3, 1] = 1.0
    return x, np.array([2, 4, -1, 1, 0], np.float32)


def test_block_number_and_defaults():
    assert param_blocks()["adacos_add_m_scale_param"].number == 211
    param = parse_text(TEXT, caffe_pb2.LayerParameter())
    assert 211 in wire_field_numbers(param.SerializeToString())
    defaults = get_param_block(caffe_pb2.LayerParameter(), "adacos_add_m_scale_param")
    assert (defaults.m, defaults.num_classes, defaults.transform_test) == (0.5, 8750, False)


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_matches_the_fork_over_three_forwards(make_layer, blob_of, fork_face, phase):
    x, labels = data()
    layer = make_layer(TEXT, phase=phase)
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    scale = np.float32(math.sqrt(2) * math.log(10575 - 1))
    assert layer.scale == pytest.approx(scale)
    dy = np.random.default_rng(3).normal(size=x.shape).astype(np.float32)
    for _ in range(3):
        layer.forward(bottom, top)
        top[0].mutable_cpu_diff()[...] = dy
        layer.backward(top, [True, False], bottom)
        want, dx, scale = fork_face.adacos_add_m_scale(x, labels, 0.5, scale, dy)
        assert layer.scale == pytest.approx(float(scale), rel=1e-5)
        np.testing.assert_allclose(top[0].cpu_data(), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-5, atol=1e-5)


def test_branches_by_hand(make_layer, blob_of):
    x, labels = data()
    layer = make_layer(TEXT)
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    y = top[0].cpu_data() / layer.scale
    assert y[0, 2] == pytest.approx(math.cos(math.acos(x[0, 2]) + 0.5), abs=1e-6)
    assert y[1, 4] == pytest.approx(-0.95 - 0.5 * math.sin(0.5), abs=1e-6)
    assert y[3, 1] == pytest.approx(math.cos(0.5), abs=1e-6)  # c = 1
    np.testing.assert_allclose(y[2], x[2], rtol=1e-6)  # label -1: only scaled


def test_gradient_with_the_scale_held(make_layer, blob_of):
    # The fork's backward treats s as a constant: d(s psi(c))/dc = s psi'(c). Check it by central
    # differences of s psi at the scale the forward used.
    x, labels = data()
    x[3, 1] = 0.4
    layer = make_layer(TEXT)
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    scale = float(layer.scale)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, False], bottom)

    def psi(c):
        return math.cos(math.acos(c) + 0.5) if c > math.cos(math.pi - 0.5) else c - 0.5 * math.sin(0.5)

    for i, y in enumerate(labels.astype(int)):
        if y >= 0:
            c, step = float(x[i, y]), 1e-3
            numeric = scale * (psi(c + step) - psi(c - step)) / (2 * step)
            assert bottom[0].cpu_diff()[i, y] == pytest.approx(numeric, rel=1e-3)
    off = np.ones(x.shape, bool)
    off[[0, 1, 3, 4], [2, 4, 1, 0]] = False
    np.testing.assert_allclose(bottom[0].cpu_diff()[off], scale, rtol=1e-6)


def test_refuses_a_label_beyond_the_classes(make_layer, blob_of):
    x, labels = data()
    labels[0] = 6
    layer = make_layer(TEXT)
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    with pytest.raises(LayerSetupError, match=r"outside \[0, 6\)"):
        layer.forward(bottom, top)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, list(data()), propagate_down=[True, False])
