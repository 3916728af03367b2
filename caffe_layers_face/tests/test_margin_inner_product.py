"""MarginInnerProduct (SphereFace): its block, the lambda schedule over the layer's iteration counter, the
in-place weight normalisation, forward and backward against the fork's code written as loops, gradient checks
(the fork's backward is the gradient except on the label's column, where it rescales the coefficients of w and
x to unit length), refusals and GPU mode."""

import struct

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, param_blocks
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import wire_field_numbers
from caffe_layers_face.margin_inner_product import margin_terms

TYPES = ["SINGLE", "DOUBLE", "TRIPLE", "QUADRUPLE"]


def text(margin="SINGLE", extra="base: 1000 gamma: 0.12 power: 1 lambda_min: 5", tops=("y", "lambda")):
    top_text = " ".join(f'top: "{t}"' for t in tops)
    return (f'name: "fc6" type: "MarginInnerProduct" bottom: "x" bottom: "label" {top_text} '
            f'margin_inner_product_param {{ num_output: 5 type: {margin} {extra} '
            f'weight_filler {{ type: "gaussian" std: 0.5 }} }}')


def data(m=4, k=6, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(m, k)).astype(np.float32)
    labels = np.array([0, 3, 4, 1, 2, 3][:m], dtype=np.float32)
    return x, labels


def setup(make_layer, blob_of, margin="SINGLE", tops=2, **kw):
    layer = make_layer(text(margin, **kw) if tops == 2 else text(margin, tops=("y",), **kw))
    x, labels = data()
    bottom = [blob_of(x), blob_of(labels)]
    top = [Blob() for _ in range(tops)]
    layer.setup(bottom, top)
    return layer, bottom, top


def test_block_number_fields_and_defaults():
    assert param_blocks()["margin_inner_product_param"].number == 1147
    param = parse_text(text("QUADRUPLE"), caffe_pb2.LayerParameter())
    block = get_param_block(param, "margin_inner_product_param")
    assert (block.num_output, block.type, block.base, block.gamma, block.power, block.lambda_min) == \
        (5, 3, 1000, pytest.approx(0.12), 1, 5)
    assert 1147 in wire_field_numbers(param.SerializeToString())
    defaults = get_param_block(caffe_pb2.LayerParameter(), "margin_inner_product_param")
    assert (defaults.type, defaults.axis, defaults.base, defaults.gamma, defaults.power, defaults.iteration,
            defaults.lambda_min) == (0, 1, 1, 0, 1, 0, 0)


def test_lambda_schedule_follows_the_layers_iteration_counter(make_layer, blob_of):
    # lambda = max(base (1 + gamma iter)^-power, lambda_min), iter = iteration + number of forwards so far.
    layer, bottom, top = setup(make_layer, blob_of, "QUADRUPLE",
                               extra="base: 1000 gamma: 0.5 power: 2 lambda_min: 50 iteration: 3")
    seen = []
    for _ in range(4):
        layer.forward(bottom, top)
        seen.append(float(top[1].cpu_data()[0]))
    expected = [max(1000 * (1 + 0.5 * it) ** -2, 50) for it in (4, 5, 6, 7)]
    assert seen == pytest.approx(expected, rel=1e-6)
    assert top[1].shape == (1,)
    assert seen[-1] == 50  # 1000 / 4.5^2 = 49.4, floored


def test_forward_normalises_the_weight_rows_in_place(make_layer, blob_of):
    layer, bottom, top = setup(make_layer, blob_of, "DOUBLE")
    before = layer.blobs[0].cpu_data().copy()
    layer.forward(bottom, top)
    after = layer.blobs[0].cpu_data()
    np.testing.assert_allclose(after, before / np.linalg.norm(before, axis=1, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("margin", TYPES)
def test_forward_and_backward_match_the_fork(make_layer, blob_of, fork_face, margin):
    layer, bottom, top = setup(make_layer, blob_of, margin)
    weight = layer.blobs[0].cpu_data().copy()
    layer.forward(bottom, top)
    lam = float(top[1].cpu_data()[0])
    dy = np.random.default_rng(5).normal(size=top[0].shape).astype(np.float32)
    top[0].mutable_cpu_diff()[...] = dy
    layer.blobs[0].mutable_cpu_diff()[...] = 1.0
    layer.backward(top, [True, False], bottom)
    x, labels = data()
    w, want, dx, dw = fork_face.margin_inner_product(x, labels, weight, margin, lam, dy)
    np.testing.assert_allclose(layer.blobs[0].cpu_data(), w, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(top[0].cpu_data(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(bottom[0].cpu_diff(), dx, rtol=1e-4, atol=1e-5)
    # the weight diff accumulates dy^T x (the plain product's gradient), onto the 1.0 put there
    np.testing.assert_allclose(layer.blobs[0].cpu_diff(), dw + 1, rtol=1e-5, atol=1e-5)


def test_double_by_hand(make_layer, blob_of):
    # x = (3, 4): |x| = 5; w_0 = (1, 0), w_1 = (0, 1) (unit already); label 0: cos = 0.6, lambda = 1 (base 1).
    # cos 2t = 2 cos^2 - 1 = -0.28; top_0 = (1 * 3 + 5 * -0.28) / 2 = 0.8; top_1 = x.w_1 = 4.
    layer = make_layer('name: "m" type: "MarginInnerProduct" bottom: "x" bottom: "l" top: "y" '
                       'margin_inner_product_param { num_output: 2 type: DOUBLE }')
    bottom = [blob_of(np.array([[3, 4]], np.float32)), blob_of(np.array([0], np.float32))]
    top = [Blob()]
    layer.setup(bottom, top)
    layer.blobs[0].mutable_cpu_data()[...] = [[2, 0], [0, 1]]
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[0].cpu_data(), [[0.8, 4.0]], rtol=1e-6)
    # backward, dy = (1, 0): coeff_w = 4 cos = 2.4, coeff_x = -(2 cos^2 + 1) / |x| = -0.344, rescaled to unit
    # length; dx = 1/2 (c_w w_0 + c_x x) + 1/2 w_0.
    top[0].mutable_cpu_diff()[...] = [[1, 0]]
    layer.backward(top, [True, False], bottom)
    cw, cx = 2.4, -0.344
    norm = np.hypot(cw, cx)
    want = 0.5 * (cw / norm * np.array([1, 0]) + cx / norm * np.array([3, 4])) + 0.5 * np.array([1, 0])
    np.testing.assert_allclose(bottom[0].cpu_diff(), [want], rtol=1e-5)


def test_gradient_single(make_layer, blob_of):
    # The bottom only: the fork's weight diff is dy^T x, not the gradient of a forward that renormalises the
    # weight in place (it is checked against the loops above).
    layer, bottom, top = setup(make_layer, blob_of, "SINGLE", tops=1)
    checker = GradientChecker(1e-2, 1e-3, 1701, check_params=False)
    checker.check_gradient_single(layer, bottom, top, 0, -1, -1)


@pytest.mark.parametrize("margin", TYPES[1:])
def test_gradient_off_the_label_column(make_layer, blob_of, margin):
    # Every top element outside the label's column: the fork's diff is the gradient (dy w_j).
    layer, bottom, top = setup(make_layer, blob_of, margin, tops=1, extra="base: 3")
    checker = GradientChecker(1e-2, 1e-3, 1701, check_params=False)
    labels = bottom[1].cpu_data().astype(int)
    for i in range(4):
        for j in range(5):
            if j != labels[i]:
                checker.check_gradient_single(layer, bottom, top, 0, 0, i * 5 + j)


@pytest.mark.parametrize("margin", TYPES[1:])
def test_gradient_on_the_label_column_up_to_the_forks_rescaling(make_layer, blob_of, margin):
    # d top[i, y_i] / dx_i = (lambda w_y + coeff_w w_y + coeff_x x_i) / (1 + lambda); the fork divides
    # (coeff_w, coeff_x) by its length. Undoing that, its diff must equal central differences.
    layer, bottom, top = setup(make_layer, blob_of, margin, tops=1, extra="base: 3")
    layer.forward(bottom, top)
    x = bottom[0].cpu_data().copy()
    labels = bottom[1].cpu_data().astype(int)
    w = layer.blobs[0].cpu_data().astype(np.float64)
    cos = (x @ w.T)[np.arange(4), labels] / np.linalg.norm(x, axis=1)
    _, cw, cx = margin_terms(np, {"DOUBLE": 1, "TRIPLE": 2, "QUADRUPLE": 3}[margin], cos.astype(np.float32))
    norm = np.hypot(cw, -cx / np.linalg.norm(x, axis=1))
    step = 1e-2
    for i in range(4):
        top[0].mutable_cpu_diff()[...] = 0
        top[0].mutable_cpu_diff()[i, labels[i]] = 1
        layer.backward(top, [True, False], bottom)
        got = bottom[0].cpu_diff().astype(np.float64)
        assert not got[np.arange(4) != i].any()
        numeric = np.zeros(6)
        for e in range(6):
            values = []
            for shift in (step, -step):
                bottom[0].mutable_cpu_data()[...] = x
                bottom[0].mutable_cpu_data()[i, e] += shift
                layer.forward(bottom, top)
                values.append(float(top[0].cpu_data()[i, labels[i]]))
            numeric[e] = (values[0] - values[1]) / (2 * step)
        bottom[0].mutable_cpu_data()[...] = x
        plain = 3 / 4 * w[labels[i]]
        np.testing.assert_allclose((got[i] - plain) * norm[i], numeric - plain, rtol=2e-2, atol=2e-3)


def test_tests_phase_computes_the_margin_too(make_layer, blob_of):
    # The fork has no phase switch: a TEST net runs the same margin forward (and needs the label).
    x, labels = data()
    outs = []
    for phase in (caffe_pb2.TRAIN, caffe_pb2.TEST):
        layer = make_layer(text("TRIPLE"), phase=phase)
        bottom, top = [blob_of(x), blob_of(labels)], [Blob(), Blob()]
        layer.setup(bottom, top)
        layer.blobs[0].mutable_cpu_data()[...] = np.arange(30, dtype=np.float32).reshape(5, 6) - 14.5
        layer.forward(bottom, top)
        outs.append(top[0].cpu_data().copy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_axis_flattens_trailing_axes(make_layer, blob_of):
    layer = make_layer(text("DOUBLE"))
    bottom = [blob_of(np.ones((3, 2, 2, 1), np.float32)), blob_of(np.zeros(3, np.float32))]
    top = [Blob(), Blob()]
    layer.setup(bottom, top)
    assert layer.blobs[0].shape == (5, 4)
    assert top[0].shape == (3, 5)


@pytest.mark.parametrize(("param_text", "bottoms", "message"), [
    ("type: DOUBLE", [(4, 6), (3,)], "one label per sample"),
    ("", [(4, 6), (4,)], "num_output must be given"),
])
def test_refusals_at_setup(make_layer, blob_of, param_text, bottoms, message):
    num = "" if message.startswith("num_output") else "num_output: 5"
    layer = make_layer('name: "m" type: "MarginInnerProduct" bottom: "x" bottom: "l" top: "y" '
                       f'margin_inner_product_param {{ {num} {param_text} }}')
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([blob_of(np.zeros(s, np.float32)) for s in bottoms], [Blob()])


def test_refuses_a_label_outside_the_classes(make_layer, blob_of):
    layer, bottom, top = setup(make_layer, blob_of, "DOUBLE")
    bottom[1].mutable_cpu_data()[0] = 5
    with pytest.raises(LayerSetupError, match=r"outside \[0, 5\)"):
        layer.forward(bottom, top)


def test_no_label_diff(make_layer, blob_of):
    # As the fork: force_backward does not reach the label, and backward writes no label diff.
    layer, bottom, top = setup(make_layer, blob_of, "DOUBLE")
    assert layer.allow_force_backward(0) and not layer.allow_force_backward(1)
    layer.forward(bottom, top)
    bottom[1].mutable_cpu_diff()[...] = 7
    layer.backward(top, [True, True], bottom)
    assert (bottom[1].cpu_diff() == 7).all()


def test_refuses_a_stored_weight_of_another_shape(make_layer, blob_of):
    param = parse_text(text("DOUBLE"), caffe_pb2.LayerParameter())
    param.blobs.add().shape.dim.extend([5, 7])
    from caffe_core.registry import create_layer
    x, labels = data()
    with pytest.raises(LayerSetupError, match=r"shape \(5, 6\)"):
        create_layer(param).setup([blob_of(x), blob_of(labels)], [Blob()])


@pytest.mark.gpu
@pytest.mark.parametrize("margin", TYPES)
def test_gpu_matches_cpu(gpu_matches_cpu, margin):
    x, labels = data()
    gpu_matches_cpu(text(margin), [x, labels], propagate_down=[True, False], rtol=1e-5, atol=1e-5)


def test_a_fork_written_layer_loads_its_block_at_147_ignored():
    # The fork's binary block at LayerParameter 147 (BVLC's swish_param here): num_output 7, type QUADRUPLE,
    # weight_filler { type: "xavier" }, base 1000. The layer's blobs still load; the block is not read.
    block = bytes([0x08, 7, 0x10, 3, 0x1a, 8, 0x12, 6]) + b"xavier" + bytes([0x2d]) + struct.pack("<f", 1000)
    layer = caffe_pb2.LayerParameter(name="fc6", type="MarginInnerProduct")
    layer.blobs.add().shape.dim.extend([7, 2])
    parsed = caffe_pb2.LayerParameter()
    parsed.ParseFromString(layer.SerializeToString() + bytes([0x9a, 0x09, len(block)]) + block)
    assert list(parsed.blobs[0].shape.dim) == [7, 2]
    assert not parsed.HasExtension(param_blocks()["margin_inner_product_param"])
