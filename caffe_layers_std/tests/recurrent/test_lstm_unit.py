"""LSTMUnit: Caffe's golden numbers, the gate formula by hand, and Caffe's gradient checks."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

UNIT = 'name: "unit" type: "LSTMUnit"'


def unit_bottoms(cont: list[float], hidden: int = 7) -> list[Blob]:
    """c_prev (1, N, H) and gates (1, N, 4H) uniform in [-1, 1], and cont (1, N), as Caffe's test."""
    rng = np.random.default_rng(11)
    streams = len(cont)
    c_prev, gates, cont_blob = Blob((1, streams, hidden)), Blob((1, streams, 4 * hidden)), Blob((1, streams))
    c_prev.mutable_cpu_data()[...] = rng.uniform(-1, 1, c_prev.shape)
    gates.mutable_cpu_data()[...] = rng.uniform(-1, 1, gates.shape)
    cont_blob.mutable_cpu_data()[...] = cont
    return [c_prev, gates, cont_blob]


def test_golden_case(golden_case):
    assert check_layer_case(golden_case("lstmunit")) == []


def test_golden_bit_exact(golden_bit_exact):
    # Two of Caffe's gate diffs are an ulp away from the same float32 expressions evaluated here.
    assert golden_bit_exact("lstmunit", inexact=("diff/gates",)) == []


def test_forward_by_hand(make_layer):
    bottom = unit_bottoms([1, 0, 1], hidden=2)
    layer, c, h = make_layer(UNIT), Blob(), Blob()
    layer.setup(bottom, [c, h])
    assert c.shape == h.shape == (1, 3, 2)
    layer.forward(bottom, [c, h])
    c_prev, gates, cont = (b.cpu_data().astype(np.float64) for b in bottom)
    i, f, o, g = np.split(gates[0], 4, axis=-1)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    expected_c = cont[0][:, None] * sig(f) * c_prev[0] + sig(i) * np.tanh(g)
    np.testing.assert_allclose(c.cpu_data()[0], expected_c, atol=1e-6)
    np.testing.assert_allclose(h.cpu_data()[0], sig(o) * np.tanh(expected_c), atol=1e-6)


@pytest.mark.parametrize("cont", [[0, 0, 0], [1, 0, 1]])
@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient(make_layer, cont, check_bottom):
    """Caffe's TestLSTMUnitGradient and TestLSTMUnitGradientNonZeroCont."""
    bottom = unit_bottoms(cont, hidden=4)
    checker = GradientChecker(1e-2, 1e-3)
    checker.check_gradient_exhaustive(make_layer(UNIT), bottom, [Blob(), Blob()], check_bottom)


def test_no_gradient_to_cont(make_layer):
    bottom = unit_bottoms([1, 1])
    layer, tops = make_layer(UNIT), [Blob(), Blob()]
    assert not layer.allow_force_backward(2)
    layer.setup(bottom, tops)
    layer.forward(bottom, tops)
    with pytest.raises(LayerSetupError, match="sequence continuation indicators"):
        layer.backward(tops, [True, True, True], bottom)


def test_gate_channels_must_be_four_times_hidden(make_layer):
    bottom = unit_bottoms([1, 1], hidden=3)
    bottom[1].reshape((1, 2, 10))
    with pytest.raises(LayerSetupError, match=r"4 \* 3 = 12 channels"):
        make_layer(UNIT).setup(bottom, [Blob(), Blob()])


def test_cont_with_three_axes_is_refused(make_layer):
    """Caffe checks that bottom[2] (cont) has exactly 2 axes, (1, N)."""
    bottom = unit_bottoms([1, 1])
    bottom[2] = Blob((1, 2, 1))
    with pytest.raises(LayerSetupError, match=r"bottom\[2\] must have shape \(1, N\) with 2 axes"):
        make_layer(UNIT).setup(bottom, [Blob(), Blob()])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    rng = np.random.default_rng(4)
    bottoms = [rng.uniform(-1, 1, (1, 3, 2)), rng.uniform(-1, 1, (1, 3, 8)), np.array([[1, 0, 1]])]
    gpu_matches_cpu(UNIT + ' top: "c" top: "h"', bottoms, propagate_down=[True, True, False])
