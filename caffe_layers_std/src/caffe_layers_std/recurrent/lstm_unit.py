"""LSTMUnit: one LSTM timestep from the gate inputs, and the gate math the LSTM layer shares."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


@dataclass
class GateActivations:
    """The activated gates of one LSTM timestep (f already multiplied by cont, as Caffe's unit does)."""

    i: Array
    f: Array
    o: Array
    g: Array
    tanh_c: Array


def unit_sigmoid(xp: ArrayModule, x: Array) -> Array:
    """LSTMUnit's logistic function, 1 / (1 + exp(-x)) in double rounded to x's precision, as Caffe's C++."""
    return (1.0 / (1.0 + xp.exp(-x.astype(xp.float64)))).astype(x.dtype)


def unit_tanh(xp: ArrayModule, x: Array) -> Array:
    """LSTMUnit's tanh, 2 sigmoid(2x) - 1 in double rounded to x's precision, as Caffe's C++."""
    return (2.0 * (1.0 / (1.0 + xp.exp(-2.0 * x.astype(xp.float64)))) - 1.0).astype(x.dtype)


def lstm_unit_forward(xp: ArrayModule, c_prev: Array, gates: Array,
                      cont: Array) -> tuple[Array, Array, GateActivations]:
    """c_t = f * c_{t-1} + i * g and h_t = o * tanh(c_t), from gate inputs (N, 4H) in the order i, f, o, g."""
    hidden = c_prev.shape[-1]
    i = unit_sigmoid(xp, gates[..., :hidden])
    o = unit_sigmoid(xp, gates[..., 2 * hidden:3 * hidden])
    g = unit_tanh(xp, gates[..., 3 * hidden:])
    cont = cont[..., None]
    f = xp.where(cont == 0, 0, cont * unit_sigmoid(xp, gates[..., hidden:2 * hidden])).astype(gates.dtype)
    c = f * c_prev + i * g
    tanh_c = unit_tanh(xp, c)
    return c, o * tanh_c, GateActivations(i, f, o, g, tanh_c)


def lstm_unit_backward(xp: ArrayModule, acts: GateActivations, c_prev: Array, c_diff: Array,
                       h_diff: Array) -> tuple[Array, Array]:
    """Caffe's LSTMUnit backward: (d c_{t-1}, d gate inputs) from the diffs of c_t and h_t."""
    c_term = c_diff + h_diff * acts.o * (1 - acts.tanh_c * acts.tanh_c)
    gates_diff = xp.concatenate((
        c_term * acts.g * acts.i * (1 - acts.i),
        c_term * c_prev * acts.f * (1 - acts.f),
        h_diff * acts.tanh_c * acts.o * (1 - acts.o),
        c_term * acts.i * (1 - acts.g * acts.g),
    ), axis=-1)
    return c_term * acts.f, gates_diff


class LSTMUnitLayer(Layer):
    """Caffe's LSTMUnit: (c_{t-1} (1,N,H), gates (1,N,4H), cont (1,N)) -> (c_t, h_t)."""

    type = "LSTMUnit"
    exact_num_bottom_blobs = 3
    exact_num_top_blobs = 2

    def allow_force_backward(self, bottom_index: int) -> bool:
        """No gradient can reach the sequence continuation indicators."""
        return bottom_index != 2

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the (1, N, ...) layout of the three bottoms and shapes both tops like c_{t-1}."""
        num = bottom[0].shape_at(1) if bottom[0].num_axes > 1 else -1
        for index, (blob, axes) in enumerate(zip(bottom, (3, 3, 2), strict=True)):
            if blob.num_axes != axes or blob.shape[0] != 1 or blob.shape[1] != num:
                raise self.error(f"bottom[{index}] must have shape (1, N{', ...' if axes == 3 else ''}) with "
                                 f"{axes} axes and N = {num} as c_prev; got {blob.shape}")
        self.hidden_dim = bottom[0].shape[2]
        if bottom[1].shape[2] != 4 * self.hidden_dim:
            raise self.error(f"bottom[1] (gate inputs) must have 4 * {self.hidden_dim} = "
                             f"{4 * self.hidden_dim} channels (i, f, o, g), got {bottom[1].shape[2]}")
        top[0].reshape_like(bottom[0])
        top[1].reshape_like(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Computes c_t and h_t."""
        c, h, _ = lstm_unit_forward(side.xp, bottom[0].data_on(side), bottom[1].data_on(side),
                                    bottom[2].data_on(side))
        top[0].mutable_data_on(side)[...] = c
        top[1].mutable_data_on(side)[...] = h

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Back-propagates to c_{t-1} and the gate inputs (both are written, as in Caffe)."""
        if propagate_down[2]:
            raise self.error("cannot back-propagate to the sequence continuation indicators (bottom[2])")
        if not (propagate_down[0] or propagate_down[1]):
            return
        xp = side.xp
        c_prev = bottom[0].data_on(side)
        _, _, acts = lstm_unit_forward(xp, c_prev, bottom[1].data_on(side), bottom[2].data_on(side))
        acts.tanh_c = unit_tanh(xp, top[0].data_on(side))
        c_prev_diff, gates_diff = lstm_unit_backward(xp, acts, c_prev, top[0].diff_on(side),
                                                     top[1].diff_on(side))
        bottom[0].mutable_diff_on(side)[...] = c_prev_diff
        bottom[1].mutable_diff_on(side)[...] = gates_diff
