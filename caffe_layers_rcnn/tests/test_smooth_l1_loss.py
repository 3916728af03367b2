"""SmoothL1Loss: caffe-fast-rcnn's 2/4-bottom form with sigma, inisis'/SSD's 3-bottom form, golden case."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import field_bytes, wire_fields


def layer_text(bottoms=2, sigma=None, loss_weight=None):
    names = ["pred", "target", "inside", "outside"][:bottoms]
    text = 'name: "loss" type: "SmoothL1Loss" top: "loss" ' + " ".join(f'bottom: "{n}"' for n in names)
    if sigma is not None:
        text += f" smooth_l1_loss_param {{ sigma: {sigma} }}"
    if loss_weight is not None:
        text += f" loss_weight: {loss_weight}"
    return text


def run(make_layer, blob_of, text, arrays, propagate=(True, True)):
    layer = make_layer(text)
    bottom, top = [blob_of(a) for a in arrays], [Blob()]
    layer.setup(bottom, top)
    loss = layer.forward(bottom, top)
    layer.backward(top, list(propagate) + [False] * (len(arrays) - 2), bottom)
    return loss, top[0].cpu_data(), [b.cpu_diff() for b in bottom]


def test_golden_smoothl1_2bottoms(golden_case):
    assert check_layer_case(golden_case("smoothl1_2bottoms")) == []


def test_two_bottoms_by_hand(make_layer, blob_of):
    # d = (0.5, 2, -3, 0): f = (0.125, 1.5, 2.5, 0); the sum 4.125 over num 2.
    loss, top, diffs = run(make_layer, blob_of, layer_text(), [[[0.5, 2.0], [-3.0, 0.0]], np.zeros((2, 2))])
    assert top.shape == () and top == np.float32(2.0625) and loss == pytest.approx(2.0625)
    np.testing.assert_allclose(diffs[0], [[0.25, 0.5], [-0.5, 0.0]])
    np.testing.assert_allclose(diffs[1], -diffs[0])


def test_sigma_moves_the_switch_to_one_over_sigma_squared(make_layer, blob_of):
    # sigma 2: |d| < 0.25 is quadratic (0.5 * 4 d^2), else |d| - 0.125; the slope is 4 d or sign(d).
    loss, _, diffs = run(make_layer, blob_of, layer_text(sigma=2), [[[0.1, 0.5, -1.0]], np.zeros((1, 3))])
    assert loss == pytest.approx(0.02 + 0.375 + 0.875, rel=1e-6)
    np.testing.assert_allclose(diffs[0], [[0.4, 1.0, -1.0]], rtol=1e-6)


def test_four_bottoms_weight_inside_and_outside(make_layer, blob_of):
    pred, target = [[2.0, 1.0], [0.2, -4.0]], np.zeros((2, 2))
    inside, outside = [[0.25, 2.0], [1.0, 0.5]], [[3.0, 0.5], [2.0, 1.0]]
    loss, _, diffs = run(make_layer, blob_of, layer_text(4, loss_weight=2), [pred, target, inside, outside])
    # d = (0.5, 2, 0.2, -2): f = (0.125, 1.5, 0.02, 1.5); times outside (0.375, 0.75, 0.04, 1.5); / num 2.
    assert loss == pytest.approx(2 * (0.375 + 0.75 + 0.04 + 1.5) / 2, rel=1e-6)
    slope = np.array([[0.5, 1.0], [0.2, -1.0]])
    np.testing.assert_allclose(diffs[0], 2 / 2 * slope * inside * np.array(outside), rtol=1e-6)
    np.testing.assert_allclose(diffs[1], -diffs[0])
    assert not diffs[2].any() and not diffs[3].any()


def test_three_bottoms_follow_ssd_without_the_weight_in_backward(make_layer, blob_of):
    # inisis/SSD: d = w (b0 - b1), loss sum f(d) / num; backward f'(d) / num with no factor w (its quirk).
    pred, target, weights = [[3.0, 1.0, 5.0]], np.zeros((1, 3)), [[0.5, 0.5, 0.0]]
    loss, _, diffs = run(make_layer, blob_of, layer_text(3), [pred, target, weights])
    assert loss == pytest.approx(1.0 + 0.125, rel=1e-6)
    np.testing.assert_allclose(diffs[0], [[1.0, 0.5, 0.0]])
    np.testing.assert_allclose(diffs[1], [[-1.0, -0.5, -0.0]])


def test_loss_weight_scales_backward_and_propagate_down_is_respected(make_layer, blob_of):
    layer = make_layer(layer_text(loss_weight=3.7))
    bottom, top = [blob_of([[0.5, -2.0]]), blob_of([[0.0, 0.0]])], [Blob()]
    layer.setup(bottom, top)
    bottom[1].mutable_cpu_diff()[...] = 7
    layer.forward(bottom, top)
    layer.backward(top, [True, False], bottom)
    np.testing.assert_allclose(bottom[0].cpu_diff(), [[3.7 * 0.5, -3.7]], rtol=1e-6)
    np.testing.assert_array_equal(bottom[1].cpu_diff(), [[7, 7]])


def test_same_legacy_shape_with_other_axes_is_accepted(make_layer, blob_of):
    loss, _, diffs = run(make_layer, blob_of, layer_text(), [np.ones((2, 3)), np.zeros((2, 3, 1, 1))])
    assert loss == pytest.approx(0.5 * 6 / 2)
    assert diffs[1].shape == (2, 3, 1, 1)


@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient_four_bottoms_as_the_fork_checks(make_layer, gaussian, check_bottom):
    # caffe-fast-rcnn's test: sigma 2.4, loss weight 3.7, GradientChecker(1e-2, 1e-2, 1701), bottoms 0 and 1.
    layer = make_layer(layer_text(4, sigma=2.4, loss_weight=3.7))
    bottom = [gaussian((10, 5, 1, 1), seed=s) for s in (1, 2, 3, 4)]
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom)


@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient_two_bottoms(make_layer, gaussian, check_bottom):
    layer = make_layer(layer_text(2, loss_weight=3.7))
    bottom = [gaussian((10, 5), seed=5, std=2), gaussian((10, 5), seed=6)]
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom)


@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient_three_bottoms_with_binary_weights(make_layer, gaussian, blob_of, check_bottom):
    # With 0/1 weights (SSD's use) the fork's weight-free backward is the true gradient.
    weights = blob_of((np.random.default_rng(7).random((8, 4)) > 0.4).astype(np.float32))
    bottom = [gaussian((8, 4), seed=8, std=2), gaussian((8, 4), seed=9), weights]
    layer = make_layer(layer_text(3))
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(layer, bottom, [Blob()], check_bottom)


@pytest.mark.parametrize(("text", "shapes", "words"), [
    (layer_text(3, sigma=2), [(2, 2)] * 3, "smooth_l1_loss_param.sigma applies to 2 or 4"),
    (layer_text(2, sigma=0), [(2, 2)] * 2, "smooth_l1_loss_param.sigma must be nonzero"),
    (layer_text(2), [(2, 2), (2, 3)], r"bottom 1 \(target\)"),
    (layer_text(4), [(2, 2), (2, 2), (2, 2), (3, 2)], r"bottom 3 \(outside weights\)"),
    (layer_text(3), [(2, 2), (2, 2), (2, 1)], r"bottom 2 \(weights\)"),
    ('type: "SmoothL1Loss" bottom: "a" top: "loss"', [(2, 2)], "at least 2 bottom"),
    (layer_text(4) + ' bottom: "e"', [(2, 2)] * 5, "at most 4 bottom"),
])
def test_refusals(make_layer, blob_of, text, shapes, words):
    with pytest.raises(LayerSetupError, match=words):
        make_layer(text).setup([blob_of(np.ones(s)) for s in shapes], [Blob()])


def test_param_block_text_and_wire_number():
    param = parse_text(layer_text(sigma=3), caffe_pb2.LayerParameter())
    assert get_param_block(param, "smooth_l1_loss_param").sigma == 3
    assert get_param_block(caffe_pb2.LayerParameter(), "smooth_l1_loss_param").sigma == 1
    data = param.SerializeToString()
    assert wire_fields(wire_fields(data)[8266712][0]) == {1: [int(np.float32(3).view(np.uint32))]}
    assert get_param_block(caffe_pb2.LayerParameter.FromString(data), "smooth_l1_loss_param").sigma == 3
    # sigma = 2.5 written by hand as the fork writes it: field 1, fixed32.
    fork = field_bytes(8266712, bytes([0x0D]) + np.float32(2.5).tobytes())
    assert get_param_block(caffe_pb2.LayerParameter.FromString(fork), "smooth_l1_loss_param").sigma == 2.5


@pytest.mark.gpu
@pytest.mark.parametrize("bottoms", [2, 3, 4])
def test_gpu_matches_cpu(gpu_matches_cpu, bottoms):
    rng = np.random.default_rng(10)
    arrays = [rng.normal(0, 2, (6, 4, 2, 2)) for _ in range(bottoms)]
    text = layer_text(bottoms, sigma=1.5 if bottoms != 3 else None)
    gpu_matches_cpu(text, arrays, propagate_down=[True, True] + [False] * (bottoms - 2))


def test_force_backward_reaches_every_bottom(make_layer):
    """The fork's SmoothL1LossLayer is a LossLayer (default loss weight 1, a top made when none is named)
    whose AllowForceBackward is true for every bottom, the targets' too."""
    layer = make_layer(layer_text(4))
    assert all(layer.allow_force_backward(i) for i in range(4))
    assert layer.auto_top_blobs
