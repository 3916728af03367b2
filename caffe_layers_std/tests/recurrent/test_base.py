"""RecurrentLayer, the base of RNN and LSTM: bottom checks, timesteps and streams, stored blobs, cont."""

import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError

KINDS = ["RNN", "LSTM"]


def layer_text(kind: str, num_output: int = 4) -> str:
    """A recurrent LayerParameter in text format with Caffe's test weight filler."""
    return (f'name: "r" type: "{kind}" recurrent_param {{ num_output: {num_output} '
            'weight_filler { type: "gaussian" std: 0.2 } }')


@pytest.mark.parametrize("kind", KINDS)
def test_no_force_backward_to_cont(make_layer, kind):
    layer = make_layer(layer_text(kind))
    assert layer.allow_force_backward(0) and not layer.allow_force_backward(1)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case, message", [
    ("cont", r"'r'.*bottom\[1\] \(cont\) must have exactly 2 axes -- \(#timesteps, #streams\) = \(2, 2\)"),
    ("num_output", "'r'.*recurrent_param.num_output must be positive"),
    ("count", "takes at most 3 bottom blob"),
    ("x", r"'r'.*bottom\[0\] must have at least 2 axes"),
])
def test_bad_configuration(make_layer, sequence, kind, case, message):
    x, cont = sequence(2, 2)
    bottom = {"cont": [x, Blob((2, 3))], "count": [x, cont, Blob((2, 1)), Blob((2, 1))],
              "x": [Blob((2,)), cont]}.get(case, [x, cont])
    with pytest.raises(LayerSetupError, match=message):
        make_layer(layer_text(kind, 0 if case == "num_output" else 4)).setup(bottom, [Blob()])


@pytest.mark.parametrize("kind", KINDS)
def test_timesteps_may_not_change(make_layer, sequence, kind):
    x, cont = sequence(2, 2)
    layer, top = make_layer(layer_text(kind)), Blob()
    layer.setup([x, cont], [top])
    x.reshape((3, 2, 3, 2))
    cont.reshape((3, 2))
    with pytest.raises(LayerSetupError, match="'r'.*number of timesteps changed from 2 to 3"):
        layer.reshape([x, cont], [top])


@pytest.mark.parametrize("kind", KINDS)
def test_input_size_may_not_change(make_layer, sequence, kind):
    x, cont = sequence(2, 2)
    layer, top = make_layer(layer_text(kind)), Blob()
    layer.setup([x, cont], [top])
    x.reshape((2, 2, 7))
    with pytest.raises(LayerSetupError, match="'r'.*each timestep of x has 7 values, the weights expect 6"):
        layer.reshape([x, cont], [top])


@pytest.mark.parametrize("kind", KINDS)
def test_stream_count_may_change(make_layer, sequence, kind):
    x, cont = sequence(2, 2)
    layer, top = make_layer(layer_text(kind)), Blob()
    layer.setup([x, cont], [top])
    x.reshape((2, 5, 3, 2))
    cont.reshape((2, 5))
    layer.forward([x, cont], [top])
    assert top.shape == (2, 5, 4)
    assert all(state.shape == (1, 5, 4) for state in layer.states)


@pytest.mark.parametrize("kind", KINDS)
def test_stored_blobs_must_fit(make_layer, sequence, kind):
    x, cont = sequence(2, 2)
    layer = make_layer(layer_text(kind))
    layer.blobs = [Blob((4, 5))]
    with pytest.raises(LayerSetupError, match=r"'r'.*stored learnable blobs have shapes \[\(4, 5\)\]"):
        layer.setup([x, cont], [Blob()])
