"""CombinedMargin (arcface-caffe): its block, forward and backward against the fork's loops, rows with a
negative label left alone, both phases, NaN outside [-1, 1] as the fork's acos, a gradient check, refusals
and GPU mode."""

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

TEXT = ('name: "combined" type: "CombinedMargin" bottom: "fc6" bottom: "label" top: "fc6_margin" '
        'combined_margin_param { m1: 1.0 m2: 0.3 m3: 0.2 }')


def data(seed=6):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.9, 0.9, size=(5, 4)).astype(np.float32),
            np.array([0, 3, -1, 2, 2], np.float32))


def test_block_number_and_defaults():
    assert param_blocks()["combined_margin_param"].number == 156
    param = parse_text(TEXT, caffe_pb2.LayerParameter())
    assert 156 in wire_field_numbers(param.SerializeToString())
    defaults = get_param_block(caffe_pb2.LayerParameter(), "combined_margin_param")
    assert (defaults.m1, defaults.m2, defaults.m3, defaults.transform_test) == \
        (4, 0.5, pytest.approx(0.35), False)


@pytest.mark.parametrize("phase", [caffe_pb2.TRAIN, caffe_pb2.TEST])
def test_matches_the_fork(make_layer, blob_of, fork_face, phase):
    layer = make_layer(TEXT, phase=phase)
    x, labels = data()
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    dy = np.random.default_rng(2).normal(size=(5, 4)).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = dy
    layer.backward(top, [True, False], bottom)
    want, dx = fork_face.combined_margin(x, labels, 1.0, 0.3, 0.2, dy)
    np.testing.assert_allclose(top[0].cpu_data(), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(top[0].cpu_data()[2], x[2])  # label -1: untouched


def test_by_hand_and_nan_outside_the_cosines(make_layer, blob_of):
    layer = make_layer(TEXT.replace("m1: 1.0 m2: 0.3 m3: 0.2", "m1: 2 m2: 0 m3: 0"))
    x = np.array([[0.5, 0.1], [1.5, 0.2]], np.float32)
    bottom, top = [blob_of(x), blob_of(np.array([0, 0], np.float32))], [Blob()]
    layer.setup(bottom, top)
    with np.errstate(invalid="ignore"):  # numpy's arccos(1.5) warns; the fork's acos returns NaN silently
        layer.forward(bottom, top)
    assert top[0].cpu_data()[0, 0] == pytest.approx(math.cos(2 * math.acos(0.5)), abs=1e-6)  # -0.5
    assert np.isnan(top[0].cpu_data()[1, 0])


def test_gradient(make_layer, blob_of):
    x, labels = data()
    GradientChecker(1e-3, 1e-2, 1701).check_gradient_exhaustive(
        make_layer(TEXT), [blob_of(x), blob_of(labels)], [Blob()], 0)


def test_refusals(make_layer, blob_of):
    x, labels = data()
    layer = make_layer(TEXT)
    in_place = [blob_of(x), blob_of(labels)]
    with pytest.raises(LayerSetupError, match="in place"):
        layer.setup(in_place, [in_place[0]])
    labels[0] = 4
    bottom, top = [blob_of(x), blob_of(labels)], [Blob()]
    layer.setup(bottom, top)
    with pytest.raises(LayerSetupError, match=r"non-negative label is outside \[0, 4\)"):
        layer.forward(bottom, top)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(TEXT, list(data()), propagate_down=[True, False])
