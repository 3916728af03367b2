"""LSTM: Caffe's golden numbers, its test_lstm_layer.cpp checks, state carrying and expose_hidden."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LSTM = """name: "lstm" type: "LSTM" recurrent_param {{ num_output: {num_output} {extra}
  weight_filler {{ type: "gaussian" std: 0.2 }} bias_filler {{ type: "gaussian" std: 0.1 }} }}"""


def lstm_text(num_output: int = 4, expose_hidden: bool = False) -> str:
    """An LSTM LayerParameter in text format with Caffe's test fillers."""
    return LSTM.format(num_output=num_output, extra="expose_hidden: true" if expose_hidden else "")


def test_golden_case(golden_case):
    assert check_layer_case(golden_case("lstm")) == []


def test_setup_shapes_and_caffe_blob_layout(make_layer, sequence):
    x, cont = sequence(2, 3)
    x_static = Blob((3, 2, 5))
    layer, top = make_layer(lstm_text(7)), Blob()
    layer.setup([x, cont, x_static], [top])
    assert top.shape == (2, 3, 7)
    assert [b.shape for b in layer.blobs] == [(28, 6), (28,), (28, 10), (28, 7)]


def test_full_sequence_equals_one_timestep_at_a_time(make_layer, sequence):
    """Caffe's TestForward: the carried-over state makes T single-step forwards match one T-step forward."""
    x, cont = sequence(3, 3)
    full, top = make_layer(lstm_text(7)), Blob()
    full.setup([x, cont], [top])
    full.forward([x, cont], [top])
    expected = top.cpu_data().copy()

    step = make_layer(lstm_text(7))
    step.blobs = full.blobs
    x_t, cont_t, top_t = Blob((1, 3, 3, 2)), Blob((1, 3)), Blob()
    step.setup([x_t, cont_t], [top_t])
    for t in range(3):
        x_t.mutable_cpu_data()[...] = x.cpu_data()[t]
        cont_t.mutable_cpu_data()[...] = t > 0
        step.forward([x_t, cont_t], [top_t])
        np.testing.assert_allclose(top_t.cpu_data()[0], expected[t], atol=1e-5)

    fresh = make_layer(lstm_text(7))
    fresh.blobs = full.blobs
    fresh.setup([x_t, cont_t], [top_t])
    for t in range(3):
        x_t.mutable_cpu_data()[...] = x.cpu_data()[t]
        cont_t.mutable_cpu_data()[...] = 0
        fresh.forward([x_t, cont_t], [top_t])
        if t == 0:
            np.testing.assert_allclose(top_t.cpu_data()[0], expected[0], atol=1e-5)
        else:
            assert (top_t.cpu_data()[0] != expected[t]).all()


def test_hidden_state_carries_over_between_forwards(make_layer, sequence):
    x, cont = sequence(2, 2, first_continuing=0)
    layer, top = make_layer(lstm_text()), Blob()
    layer.setup([x, cont], [top])
    layer.forward([x, cont], [top])
    first = top.cpu_data().copy()
    layer.forward([x, cont], [top])
    assert not np.allclose(top.cpu_data(), first)

    exposed = make_layer(lstm_text(expose_hidden=True))
    exposed.blobs = layer.blobs
    h0, c0, y, h_t, c_t = Blob(), Blob(), Blob(), Blob(), Blob()
    h0.reshape((1, 2, 4))
    c0.reshape((1, 2, 4))
    exposed.setup([x, cont, h0, c0], [y, h_t, c_t])
    exposed.forward([x, cont, h0, c0], [y, h_t, c_t])
    np.testing.assert_allclose(y.cpu_data(), first, atol=1e-6)
    h0.mutable_cpu_data()[...] = h_t.cpu_data()
    c0.mutable_cpu_data()[...] = c_t.cpu_data()
    exposed.forward([x, cont, h0, c0], [y, h_t, c_t])
    np.testing.assert_allclose(y.cpu_data(), top.cpu_data(), atol=1e-6)


def test_expose_hidden_states_get_no_gradient_and_final_diffs_are_ignored(make_layer, sequence, uniform_blob):
    x, cont = sequence(2, 2, first_continuing=0)
    rng = np.random.default_rng(3)
    h0, c0 = uniform_blob((1, 2, 4), rng), uniform_blob((1, 2, 4), rng)
    layer, y, h_t, c_t = make_layer(lstm_text(expose_hidden=True)), Blob(), Blob(), Blob()
    layer.setup([x, cont, h0, c0], [y, h_t, c_t])
    assert h_t.shape == c_t.shape == (1, 2, 4)
    layer.forward([x, cont, h0, c0], [y, h_t, c_t])
    y.mutable_cpu_diff()[...] = rng.uniform(-1, 1, y.shape)
    h0.mutable_cpu_diff()[...] = 7
    c0.mutable_cpu_diff()[...] = 7
    layer.backward([y, h_t, c_t], [True, False, True, True], [x, cont, h0, c0])
    x_diff = x.cpu_diff().copy()
    assert (h0.cpu_diff() == 7).all() and (c0.cpu_diff() == 7).all()
    h_t.mutable_cpu_diff()[...] = 100
    c_t.mutable_cpu_diff()[...] = 100
    layer.backward([y, h_t, c_t], [True, False, True, True], [x, cont, h0, c0])
    np.testing.assert_array_equal(x.cpu_diff(), x_diff)


def test_param_diffs_accumulate(make_layer, sequence):
    x, cont = sequence(2, 2)
    layer, top = make_layer(lstm_text()), Blob()
    layer.setup([x, cont], [top])
    layer.forward([x, cont], [top])
    top.mutable_cpu_diff()[...] = 1
    layer.backward([top], [True, False], [x, cont])
    once = [b.cpu_diff().copy() for b in layer.blobs]
    layer.backward([top], [True, False], [x, cont])
    for blob, diff in zip(layer.blobs, once, strict=True):
        np.testing.assert_allclose(blob.cpu_diff(), 2 * diff, rtol=1e-6)


@pytest.mark.parametrize("timesteps, streams, first_continuing", [(1, 3, 3), (2, 2, 3), (3, 2, 2)])
def test_gradient(make_layer, timesteps, streams, first_continuing, sequence):
    """Caffe's TestGradient[NonZeroCont] and ...BufferSize2 (cont = i > 2), and a longer sequence."""
    x, cont = sequence(timesteps, streams, first_continuing)
    layer = make_layer(lstm_text(3))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [x, cont], [Blob()], 0)


def test_gradient_with_static_input(make_layer, sequence, uniform_blob):
    """Caffe's TestGradientNonZeroContBufferSize2WithStaticInput, checking bottoms 0 and 2."""
    x, cont = sequence(2, 2, first_continuing=3)
    x_static = uniform_blob((2, 3, 2), np.random.default_rng(9))
    checker = GradientChecker(1e-2, 1e-3)
    for check_bottom in (0, 2):
        layer = make_layer(lstm_text(3))
        checker.check_gradient_exhaustive(layer, [x, cont, x_static], [Blob()], check_bottom)


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    rng = np.random.default_rng(4)
    cont = np.array([[0, 0], [1, 0], [1, 1]])
    gpu_matches_cpu(lstm_text(), [rng.uniform(-1, 1, (3, 2, 3, 2)), cont, rng.uniform(-1, 1, (2, 5))],
                    propagate_down=[True, False, True])
