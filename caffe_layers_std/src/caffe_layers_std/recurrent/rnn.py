"""RNN: Caffe's simple recurrent layer (rnn_layer.cpp).

h_t = tanh(W_hh (cont_t * h_{t-1}) + W_xh x_t + b_h [+ W_xh_static x_static]),  o_t = tanh(W_ho h_t + b_o).
Learnable blobs: W_xh (H, I), b_h (H), [W_xh_static (H, S)], W_hh (H, H), W_ho (H, H), b_o (H).
"""

from __future__ import annotations

from caffe_core.array_types import Array, ArrayModule
from caffe_core.device import Side
from caffe_layers_std.recurrent.base import ParamSpec, RecurrentLayer


class RNNLayer(RecurrentLayer):
    """Caffe's RNN over (T, N, ...) sequences with continuation indicators; state h."""

    type = "RNN"
    param_block = "recurrent_param"
    state_count = 1
    input_weight, input_bias, static_weight, recurrent_weight = "W_xh", "b_h", "W_xh_static", "W_hh"

    def param_specs(self) -> list[ParamSpec]:
        """W_xh, b_h, [W_xh_static], W_hh, W_ho, b_o."""
        hidden = self.num_output
        specs = [ParamSpec(self.input_weight, (hidden, self.input_dim)),
                 ParamSpec(self.input_bias, (hidden,), is_bias=True)]
        if self.static_input:
            specs.append(ParamSpec(self.static_weight, (hidden, self.static_dim)))
        specs += [ParamSpec(self.recurrent_weight, (hidden, hidden)), ParamSpec("W_ho", (hidden, hidden)),
                  ParamSpec("b_o", (hidden,), is_bias=True)]
        return specs

    def forward_sequence(self, xp: ArrayModule, side: Side, x: Array, cont: Array,
                         x_static: Array | None, initial: list[Array]) -> tuple[Array, list[Array]]:
        """Runs the RNN from h_0; returns all o_t and the final h_T."""
        w_hh = self.param_data(side, self.recurrent_weight)
        inputs = self.project_inputs(xp, side, x, x_static)
        (h,) = initial
        h_conted, hidden = [], []
        for t in range(self.timesteps):
            h_conted.append(cont[t][:, None] * h)
            h = xp.tanh(inputs[t] + xp.matmul(h_conted[t], w_hh.T))
            hidden.append(h)
        hidden = xp.stack(hidden)
        output = xp.tanh(xp.matmul(hidden, self.param_data(side, "W_ho").T) + self.param_data(side, "b_o"))
        self._cache = (x, x_static, cont, xp.stack(h_conted), hidden, output)
        return output, [h]

    def backward_sequence(self, xp: ArrayModule, side: Side,
                          output_diff: Array) -> tuple[Array, Array | None]:
        """Back-propagates through time; the final state's diff is zero, as in Caffe."""
        x, x_static, cont, h_conted, hidden, output = self._cache
        w_hh = self.param_data(side, self.recurrent_weight)
        out_pre_diff = output_diff * (1 - output * output)
        flat_out_diff = out_pre_diff.reshape(-1, self.num_output)
        flat_hidden = hidden.reshape(-1, self.num_output)
        self.accumulate_weight_gradient(side, "W_ho", flat_out_diff.T, flat_hidden)
        self.accumulate_param_diff(side, "b_o", flat_out_diff.sum(axis=0))
        hidden_diff = xp.matmul(out_pre_diff, self.param_data(side, "W_ho"))
        h_next_diff = xp.zeros_like(hidden_diff[0])
        pre_diffs = []
        for t in range(self.timesteps - 1, -1, -1):
            pre_diff = (hidden_diff[t] + h_next_diff) * (1 - hidden[t] * hidden[t])
            h_next_diff = xp.matmul(pre_diff, w_hh) * cont[t][:, None]
            pre_diffs.append(pre_diff)
        return self.backward_projections(xp, side, xp.stack(pre_diffs[::-1]), x, x_static, h_conted)
