"""Lstm (caffe_ocr / CTPN): gate order and blob layout, the forward against the fork's loops written out in
float64, the clip bottom's carried state, gradient clipping, gradients, GPU mode, refusals."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

UNIFORM = ('weight_filler { type: "uniform" min: -0.5 max: 0.5 } '
           'bias_filler { type: "uniform" min: -0.5 max: 0.5 }')


def lstm_text(hidden: int, extra: str = UNIFORM) -> str:
    return f'name: "lstm" type: "Lstm" lstm_param {{ num_output: {hidden} {extra} }}'


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def fork_forward(x, weight_i, weight_h, bias, clip=None):
    """LstmLayer::Forward_cpu, element by element (gates i, f, o, g at rows d, H + d, 2H + d, 3H + d), with
    the GPU kernel's sequence-wise recurrent term; clip[t] (or t > 0) decides the continuation."""
    steps, num = x.shape[:2]
    hidden = weight_h.shape[1]
    x = x.reshape(steps, num, -1).astype(np.float64)
    h = np.zeros((steps, num, hidden))
    c = np.zeros((steps, num, hidden))
    for t in range(steps):
        for n in range(num):
            cont = clip[t] if clip is not None else float(t > 0)
            h_prev = h[t - 1, n] if t > 0 else np.zeros(hidden)
            c_prev = c[t - 1, n] if t > 0 else np.zeros(hidden)
            for d in range(hidden):
                pre = [bias[k * hidden + d]
                       + sum(weight_i[k * hidden + d, j] * x[t, n, j] for j in range(x.shape[2]))
                       + cont * sum(weight_h[k * hidden + d, j] * h_prev[j] for j in range(hidden))
                       for k in range(4)]
                i, f, o, g = sigmoid(pre[0]), sigmoid(pre[1]), sigmoid(pre[2]), math.tanh(pre[3])
                c[t, n, d] = cont * f * c_prev[d] + i * g
                h[t, n, d] = o * math.tanh(c[t, n, d])
    return h, c


def run(layer, arrays, blob_of):
    bottom, top = [blob_of(a) for a in arrays], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return bottom, top


def test_blob_shapes_and_top_shape(make_layer, blob_of):
    layer = make_layer(lstm_text(3))
    _, top = run(layer, [np.zeros((4, 2, 5, 1), np.float32)], blob_of)
    assert [b.shape for b in layer.blobs] == [(12, 5), (12, 3), (12,)]
    assert top[0].shape == (4, 2, 3)


def test_gate_order_input_forget_output_cell(make_layer, blob_of):
    # Zero weights; biases pick the gates: i = o = sigmoid(20) ~ 1, f = sigmoid(-20) ~ 0, g = tanh(atanh 0.5).
    layer = make_layer(lstm_text(2, 'bias_filler { type: "constant" value: 0 }'))
    x = np.ones((3, 1, 2), np.float32)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.blobs[0].mutable_cpu_data()[...] = 0
    layer.blobs[1].mutable_cpu_data()[...] = 0
    layer.blobs[2].mutable_cpu_data()[...] = np.repeat([20.0, -20.0, 20.0, math.atanh(0.5)], 2)
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[0].cpu_data(), np.full((3, 1, 2), math.tanh(0.5)), rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 2, 4), (2, 3, 2, 2)])
def test_forward_matches_the_forks_loops(make_layer, blob_of, shape):
    x = np.random.default_rng(2).uniform(-1, 1, shape).astype(np.float32)
    layer = make_layer(lstm_text(3))
    _, top = run(layer, [x], blob_of)
    expected, _ = fork_forward(x, *(b.cpu_data() for b in layer.blobs))
    np.testing.assert_allclose(top[0].cpu_data(), expected, rtol=1e-5, atol=1e-6)


def test_clip_bottom_carries_the_last_states_into_the_next_forward(make_layer, blob_of):
    # Two calls with a clip bottom compute what one call over the joined sequence computes.
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (5, 1, 3)).astype(np.float32)
    clip = np.array([0, 1, 1, 1, 0], np.float32)
    layer = make_layer(lstm_text(2))
    bottom, top = [blob_of(x[:3]), blob_of(clip[:3].reshape(3, 1))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    first = top[0].cpu_data().copy()
    second_bottom = [blob_of(x[3:]), blob_of(clip[3:].reshape(2, 1))]
    layer.reshape(second_bottom, top)
    layer.forward(second_bottom, top)
    expected, _ = fork_forward(x, *(b.cpu_data() for b in layer.blobs), clip=clip)
    np.testing.assert_allclose(np.concatenate([first, top[0].cpu_data()]), expected, rtol=1e-5, atol=1e-6)


def test_without_clip_each_forward_starts_from_zero_states(make_layer, blob_of):
    x = np.random.default_rng(4).uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    layer = make_layer(lstm_text(2))
    bottom, top = run(layer, [x], blob_of)
    once = top[0].cpu_data().copy()
    layer.forward(bottom, top)
    np.testing.assert_array_equal(top[0].cpu_data(), once)


def test_clipping_threshold_bounds_the_pre_activation_gradient(make_layer, blob_of):
    x = np.random.default_rng(5).uniform(-1, 1, (4, 2, 3)).astype(np.float32)
    layer = make_layer(lstm_text(2, UNIFORM + " clipping_threshold: 0.01"))
    bottom, top = run(layer, [x], blob_of)
    top[0].mutable_cpu_diff()[...] = 100
    layer.backward(top, [True], bottom)
    # Each bias diff sums one clipped pre-activation diff per step and sequence: at most 8 x 0.01.
    bias_diff = layer.blobs[2].cpu_diff()
    assert np.abs(bias_diff).max() <= 8 * 0.01 + 1e-6
    assert np.abs(bias_diff).max() > 0.05


def test_backward_accumulates_param_diffs_and_keeps_the_top_diff(make_layer, blob_of):
    x = np.random.default_rng(6).uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    layer = make_layer(lstm_text(2))
    bottom, top = run(layer, [x], blob_of)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True], bottom)
    once = [b.cpu_diff().copy() for b in layer.blobs]
    np.testing.assert_array_equal(top[0].cpu_diff(), 1)
    layer.backward(top, [True], bottom)
    for blob, diff in zip(layer.blobs, once, strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), 2 * diff, rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 2, 3), (4, 1, 2, 2)])
def test_gradient(make_layer, blob_of, shape):
    x = blob_of(np.random.default_rng(7).uniform(-1, 1, shape))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(lstm_text(3)), [x], [Blob()], 0)


def test_gradient_with_a_clip_bottom(make_layer, blob_of):
    # A continuation flag of 0 inside the sequence starts a new one; the states before step 0 come from the
    # previous forward (constant here: the checker's forwards all start from the same ones).
    x = blob_of(np.random.default_rng(8).uniform(-1, 1, (4, 1, 3)))
    clip = blob_of(np.array([0, 1, 0, 1], np.float32).reshape(4, 1))
    layer = make_layer(lstm_text(3))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [x, clip], [Blob()], 0)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(9).uniform(-1, 1, (3, 2, 4))
    gpu_matches_cpu(lstm_text(3, UNIFORM + " clipping_threshold: 0.1"), [x], propagate_down=[True])


@pytest.mark.parametrize(("text", "arrays", "message"), [
    ('name: "lstm" type: "Lstm" lstm_param { }', [np.zeros((2, 1, 3))], "num_output must be positive"),
    (lstm_text(2), [np.zeros((3, 1, 2)), np.zeros((2, 1))], "one value per time step"),
    (lstm_text(2), [np.zeros((3, 2, 2)), np.zeros((3, 1))], "only for one sequence"),
    (lstm_text(2), [np.zeros((3, 2))], "must have"),
])
def test_refusals(make_layer, blob_of, text, arrays, message):
    with pytest.raises(LayerSetupError, match=message):
        run(make_layer(text), arrays, blob_of)


def test_refuses_another_input_size_after_setup(make_layer, blob_of):
    layer = make_layer(lstm_text(2))
    _, top = run(layer, [np.zeros((3, 1, 2), np.float32)], blob_of)
    with pytest.raises(LayerSetupError, match="input size 3"):
        layer.reshape([blob_of(np.zeros((3, 1, 3), np.float32))], top)


def test_refuses_stored_blobs_of_other_shapes(make_layer, blob_of):
    layer = make_layer(lstm_text(2))
    layer.blobs = [Blob((8, 3)), Blob((8, 2)), Blob((8,))]
    with pytest.raises(LayerSetupError, match="expected blobs of shapes"):
        layer.setup([blob_of(np.zeros((3, 1, 2), np.float32))], [Blob()])


def test_backward_reads_its_own_copy_of_the_hidden_states(make_layer, blob_of):
    # A later in-place layer (a ReLU, say) may rewrite the top between forward and backward.
    x = np.random.default_rng(10).uniform(-1, 1, (3, 2, 3)).astype(np.float32)
    layer = make_layer(lstm_text(2))
    bottom, top = run(layer, [x], blob_of)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True], bottom)
    expected = [bottom[0].cpu_diff().copy(), *(b.cpu_diff().copy() for b in layer.blobs)]
    for blob in layer.blobs:
        blob.mutable_cpu_diff()[...] = 0
    layer.forward(bottom, top)
    top[0].mutable_cpu_data()[...] = 0
    layer.backward(top, [True], bottom)
    for got, want in zip([bottom[0].cpu_diff(), *(b.cpu_diff() for b in layer.blobs)], expected, strict=True):
        np.testing.assert_array_equal(got, want)
