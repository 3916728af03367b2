"""RNN: Caffe's golden numbers, its test_rnn_layer.cpp checks, state carrying and expose_hidden."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

RNN = """name: "rnn" type: "RNN" recurrent_param {{ num_output: {num_output} {extra}
  weight_filler {{ type: "gaussian" std: 0.2 }} bias_filler {{ type: "gaussian" std: 0.1 }} }}"""


def rnn_text(num_output: int = 4, expose_hidden: bool = False) -> str:
    """An RNN LayerParameter in text format with Caffe's test fillers."""
    return RNN.format(num_output=num_output, extra="expose_hidden: true" if expose_hidden else "")


def reference_rnn(blobs: list[Blob], x: np.ndarray, cont: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The RNN formula written out per timestep in float64."""
    w_xh, b_h, w_hh, w_ho, b_o = (b.cpu_data().astype(np.float64) for b in blobs)
    outputs = []
    for t in range(x.shape[0]):
        h = np.tanh((cont[t][:, None] * h) @ w_hh.T + x[t].reshape(x.shape[1], -1) @ w_xh.T + b_h)
        outputs.append(np.tanh(h @ w_ho.T + b_o))
    return np.stack(outputs)


def test_golden_case(golden_case):
    assert check_layer_case(golden_case("rnn")) == []


def test_setup_shapes_and_caffe_blob_layout(make_layer, sequence):
    x, cont = sequence(2, 3)
    layer, top = make_layer(rnn_text(7)), Blob()
    layer.setup([x, cont, Blob((3, 2, 5))], [top])
    assert top.shape == (2, 3, 7)
    assert [b.shape for b in layer.blobs] == [(7, 6), (7,), (7, 10), (7, 7), (7, 7), (7,)]


def test_biases_take_the_bias_filler(make_layer, sequence):
    """Caffe fills b_h (x_transform's bias) and b_o with bias_filler, the other blobs with weight_filler."""
    x, cont = sequence(2, 3)
    fillers = 'weight_filler { type: "constant" value: 0.5 } bias_filler { type: "constant" value: 0.25 }'
    layer = make_layer(f'name: "rnn" type: "RNN" recurrent_param {{ num_output: 4 {fillers} }}')
    layer.setup([x, cont], [Blob()])
    for blob, value in zip(layer.blobs, [0.5, 0.25, 0.5, 0.5, 0.25], strict=True):
        np.testing.assert_array_equal(blob.cpu_data(), value)


def test_forward_matches_formula_and_carries_state(make_layer, sequence):
    x, cont = sequence(3, 2, first_continuing=3)
    layer, top = make_layer(rnn_text()), Blob()
    layer.setup([x, cont], [top])
    layer.forward([x, cont], [top])
    zeros = np.zeros((2, 4))
    expected = reference_rnn(layer.blobs, x.cpu_data(), cont.cpu_data(), zeros)
    np.testing.assert_allclose(top.cpu_data(), expected, atol=1e-6)
    w_xh, b_h, w_hh = (b.cpu_data().astype(np.float64) for b in layer.blobs[:3])
    h = zeros
    for t in range(3):
        x_t = x.cpu_data()[t].reshape(2, -1)
        h = np.tanh((cont.cpu_data()[t][:, None] * h) @ w_hh.T + x_t @ w_xh.T + b_h)
    cont.mutable_cpu_data()[...] = 1
    layer.forward([x, cont], [top])
    np.testing.assert_allclose(top.cpu_data(), reference_rnn(layer.blobs, x.cpu_data(), cont.cpu_data(), h),
                               atol=1e-6)


def test_full_sequence_equals_one_timestep_at_a_time(make_layer, sequence):
    """Caffe's TestForward."""
    x, cont = sequence(3, 3)
    full, top = make_layer(rnn_text(7)), Blob()
    full.setup([x, cont], [top])
    full.forward([x, cont], [top])
    expected = top.cpu_data().copy()
    step = make_layer(rnn_text(7))
    step.blobs = full.blobs
    x_t, cont_t, top_t = Blob((1, 3, 3, 2)), Blob((1, 3)), Blob()
    step.setup([x_t, cont_t], [top_t])
    for t in range(3):
        x_t.mutable_cpu_data()[...] = x.cpu_data()[t]
        cont_t.mutable_cpu_data()[...] = t > 0
        step.forward([x_t, cont_t], [top_t])
        np.testing.assert_allclose(top_t.cpu_data()[0], expected[t], atol=1e-5)


def test_expose_hidden(make_layer, sequence, uniform_blob):
    x, cont = sequence(2, 2, first_continuing=0)
    rng = np.random.default_rng(3)
    h0 = uniform_blob((1, 2, 4), rng)
    layer, y, h_t = make_layer(rnn_text(expose_hidden=True)), Blob(), Blob()
    layer.setup([x, cont, h0], [y, h_t])
    layer.forward([x, cont, h0], [y, h_t])
    np.testing.assert_allclose(
        y.cpu_data(), reference_rnn(layer.blobs, x.cpu_data(), cont.cpu_data(), h0.cpu_data()[0]), atol=1e-6)
    y.mutable_cpu_diff()[...] = rng.uniform(-1, 1, y.shape)
    h0.mutable_cpu_diff()[...] = 7
    layer.backward([y, h_t], [True, False, True], [x, cont, h0])
    x_diff = x.cpu_diff().copy()
    assert (h0.cpu_diff() == 7).all()
    h_t.mutable_cpu_diff()[...] = 100
    layer.backward([y, h_t], [True, False, True], [x, cont, h0])
    np.testing.assert_array_equal(x.cpu_diff(), x_diff)
    with pytest.raises(LayerSetupError, match="hidden state input shape"):
        layer.reshape([x, cont, Blob((1, 3, 4))], [y, h_t])


@pytest.mark.parametrize("timesteps, streams, first_continuing", [(1, 3, 3), (2, 2, 3), (3, 2, 2)])
def test_gradient(make_layer, timesteps, streams, first_continuing, sequence):
    """Caffe's TestGradient[NonZeroCont] and ...BufferSize2 (cont = i > 2), and a longer sequence."""
    x, cont = sequence(timesteps, streams, first_continuing)
    layer = make_layer(rnn_text(3))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [x, cont], [Blob()], 0)


def test_gradient_with_static_input(make_layer, sequence, uniform_blob):
    """Caffe's TestGradientNonZeroContBufferSize2WithStaticInput, checking bottoms 0 and 2."""
    x, cont = sequence(2, 2, first_continuing=3)
    x_static = uniform_blob((2, 3, 2), np.random.default_rng(9))
    checker = GradientChecker(1e-2, 1e-3)
    for check_bottom in (0, 2):
        layer = make_layer(rnn_text(3))
        checker.check_gradient_exhaustive(layer, [x, cont, x_static], [Blob()], check_bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    rng = np.random.default_rng(4)
    cont = np.array([[0, 0], [1, 0], [1, 1]])
    gpu_matches_cpu(rnn_text(), [rng.uniform(-1, 1, (3, 2, 3, 2)), cont, rng.uniform(-1, 1, (2, 5))],
                    propagate_down=[True, False, True])
