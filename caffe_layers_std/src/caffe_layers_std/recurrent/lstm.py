"""LSTM: Caffe's long short-term memory layer (lstm_layer.cpp), gate order i, f, o, g.

gate_t = W_hc (cont_t * h_{t-1}) + W_xc x_t + b_c [+ W_xc_static x_static], then Caffe's LSTMUnit gives
c_t and h_t. Learnable blobs: W_xc (4H, I), b_c (4H), [W_xc_static (4H, S)], W_hc (4H, H).
"""

from __future__ import annotations

from caffe_core.array_types import Array, ArrayModule
from caffe_core.device import Side
from caffe_layers_std.recurrent.base import ParamSpec, RecurrentLayer
from caffe_layers_std.recurrent.lstm_unit import lstm_unit_backward, lstm_unit_forward


class LSTMLayer(RecurrentLayer):
    """Caffe's LSTM over (T, N, ...) sequences with continuation indicators; states h and c."""

    type = "LSTM"
    param_block = "recurrent_param"
    state_count = 2
    input_weight, input_bias, static_weight, recurrent_weight = "W_xc", "b_c", "W_xc_static", "W_hc"

    def param_specs(self) -> list[ParamSpec]:
        """W_xc, b_c, [W_xc_static], W_hc."""
        gates = 4 * self.num_output
        specs = [ParamSpec(self.input_weight, (gates, self.input_dim)),
                 ParamSpec(self.input_bias, (gates,), is_bias=True)]
        if self.static_input:
            specs.append(ParamSpec(self.static_weight, (gates, self.static_dim)))
        specs.append(ParamSpec(self.recurrent_weight, (gates, self.num_output)))
        return specs

    def forward_sequence(self, xp: ArrayModule, side: Side, x: Array, cont: Array,
                         x_static: Array | None, initial: list[Array]) -> tuple[Array, list[Array]]:
        """Runs the LSTM from (h_0, c_0); returns all h_t and the final (h_T, c_T)."""
        w_hc = self.param_data(side, self.recurrent_weight)
        gate_inputs = self.project_inputs(xp, side, x, x_static)
        h, c = initial
        h_conted, c_prevs, outputs, acts = [], [], [], []
        for t in range(self.timesteps):
            h_conted.append(cont[t][:, None] * h)
            c_prevs.append(c)
            gates = gate_inputs[t] + xp.matmul(h_conted[t], w_hc.T)
            c, h, step_acts = lstm_unit_forward(xp, c, gates, cont[t])
            outputs.append(h)
            acts.append(step_acts)
        self._cache = (x, x_static, cont, xp.stack(h_conted), c_prevs, acts)
        return xp.stack(outputs), [h, c]

    def backward_sequence(self, xp: ArrayModule, side: Side,
                          output_diff: Array) -> tuple[Array, Array | None]:
        """Back-propagates through time; the final states' diffs are zero, as in Caffe."""
        x, x_static, cont, h_conted, c_prevs, acts = self._cache
        w_hc = self.param_data(side, self.recurrent_weight)
        h_next_diff = xp.zeros_like(output_diff[0])
        c_next_diff = xp.zeros_like(output_diff[0])
        gates_diff = []
        for t in range(self.timesteps - 1, -1, -1):
            c_next_diff, step_gates_diff = lstm_unit_backward(xp, acts[t], c_prevs[t], c_next_diff,
                                                              output_diff[t] + h_next_diff)
            h_next_diff = xp.matmul(step_gates_diff, w_hc) * cont[t][:, None]
            gates_diff.append(step_gates_diff)
        return self.backward_projections(xp, side, xp.stack(gates_diff[::-1]), x, x_static, h_conted)
