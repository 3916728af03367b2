"""LSTM: Caffe's long short-term memory layer (lstm_layer.cpp), gate order i, f, o, g.

gate_t = W_hc (cont_t * h_{t-1}) + W_xc x_t + b_c [+ W_xc_static x_static], then Caffe's LSTMUnit gives
c_t and h_t. Learnable blobs: W_xc (4H, I), b_c (4H), [W_xc_static (4H, S)], W_hc (4H, H).
"""

from __future__ import annotations

from typing import Any

from caffe_core.device import Side
from caffe_layers_std.recurrent.base import ParamSpec, RecurrentLayer
from caffe_layers_std.recurrent.lstm_unit import lstm_unit_backward, lstm_unit_forward


class LSTMLayer(RecurrentLayer):
    """Caffe's LSTM over (T, N, ...) sequences with continuation indicators; states h and c."""

    type = "LSTM"
    state_count = 2

    def param_specs(self) -> list[ParamSpec]:
        """W_xc, b_c, [W_xc_static], W_hc."""
        gates = 4 * self.num_output
        specs = [ParamSpec("W_xc", (gates, self.input_dim)), ParamSpec("b_c", (gates,), is_bias=True)]
        if self.static_input:
            specs.append(ParamSpec("W_xc_static", (gates, self.static_dim)))
        specs.append(ParamSpec("W_hc", (gates, self.num_output)))
        return specs

    def forward_sequence(self, xp: Any, side: Side, x: Any, cont: Any, x_static: Any | None,
                         initial: list[Any]) -> tuple[Any, list[Any]]:
        """Runs the LSTM from (h_0, c_0); returns all h_t and the final (h_T, c_T)."""
        w_hc = self.param_data(side, "W_hc")
        gate_inputs = xp.matmul(x, self.param_data(side, "W_xc").T) + self.param_data(side, "b_c")
        if x_static is not None:
            gate_inputs += xp.matmul(x_static, self.param_data(side, "W_xc_static").T)
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

    def backward_sequence(self, xp: Any, side: Side, output_diff: Any) -> tuple[Any, Any | None]:
        """Back-propagates through time; the final states' diffs are zero, as in Caffe."""
        x, x_static, cont, h_conted, c_prevs, acts = self._cache
        w_hc = self.param_data(side, "W_hc")
        h_next_diff = xp.zeros_like(output_diff[0])
        c_next_diff = xp.zeros_like(output_diff[0])
        gates_diff = []
        for t in range(self.timesteps - 1, -1, -1):
            c_next_diff, step_gates_diff = lstm_unit_backward(xp, acts[t], c_prevs[t], c_next_diff,
                                                              output_diff[t] + h_next_diff)
            h_next_diff = xp.matmul(step_gates_diff, w_hc) * cont[t][:, None]
            gates_diff.append(step_gates_diff)
        gates_diff = xp.stack(gates_diff[::-1])
        flat_diff = gates_diff.reshape(-1, gates_diff.shape[-1])
        self.accumulate_param_diff(side, "W_xc", xp.matmul(flat_diff.T, x.reshape(-1, x.shape[-1])))
        self.accumulate_param_diff(side, "b_c", flat_diff.sum(axis=0))
        flat_h_conted = h_conted.reshape(-1, self.num_output)
        self.accumulate_param_diff(side, "W_hc", xp.matmul(flat_diff.T, flat_h_conted))
        static_diff = None
        if x_static is not None:
            summed = gates_diff.sum(axis=0)
            self.accumulate_param_diff(side, "W_xc_static", xp.matmul(summed.T, x_static))
            static_diff = xp.matmul(summed, self.param_data(side, "W_xc_static"))
        return xp.matmul(gates_diff, self.param_data(side, "W_xc")), static_diff
