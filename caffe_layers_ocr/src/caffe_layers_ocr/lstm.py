"""Lstm: Junhyuk Oh's LSTM layer as senlinuc/caffe_ocr and tianzhi0549/CTPN carry it (lstm_layer_Junhyuk.cpp /
lstm_layer.cpp), distinct from BVLC's `LSTM` (caffe-layers-std).

A bottom (T, N, I...) of T time steps and N sequences (the input is the flattened axes from 2 on, as CTPN's
`count(2)`; caffe_ocr's `shape(2)` is the same for its 3-axis inputs); top (T, N, H). Blobs: input-to-hidden
weights (4H, I), hidden-to-hidden weights (4H, H), bias (4H,), each in the gate order input, forget, output,
cell candidate (rows [0, H), [H, 2H), [2H, 3H), [3H, 4H)):

    pre_t = W_i x_t + b + cont_t W_h h_{t-1}
    i, f, o = sigmoid(pre_t[0:3H]);  g = tanh(pre_t[3H:4H])
    c_t = cont_t f c_{t-1} + i g;  h_t = o tanh(c_t)

Without a second bottom cont_t = (t > 0) and h_{-1} = c_{-1} = 0. With the optional second bottom ("clip",
one value per time step) cont_t is its value and h_{-1}, c_{-1} are the last step's states of the previous
forward (the fork's truncated BPTT across calls). Backward clips the pre-activation gradient to
[-clipping_threshold, clipping_threshold] when the threshold is positive, as the fork does.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blas import gemm_accumulate
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block

F32 = np.float32


def _sigmoid(xp: ArrayModule, x: Array) -> Array:
    # exp(-x) stays finite (x >= -88): the fork's overflow to inf gives 0, this gives under 1e-38.
    return F32(1) / (F32(1) + xp.exp(-xp.maximum(x, F32(-88))))


class LstmLayer(Layer):
    """caffe_ocr's / CTPN's `Lstm`: (T, N, I...) -> (T, N, num_output), optional per-step clip bottom."""

    type = "Lstm"
    param_block = "lstm_param"
    min_bottom_blobs = 1
    max_bottom_blobs = 2
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (3, 32)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads lstm_param; creates (or checks) the three weight blobs."""
        param = get_param_block(self.layer_param, "lstm_param")
        if param.num_output < 1:
            raise self.error("lstm_param.num_output must be positive (the number of hidden units)")
        self.hidden = int(param.num_output)
        self.clipping_threshold = F32(param.clipping_threshold)
        self.input_size = bottom[0].count_between(2, bottom[0].num_axes)
        hidden, inputs = self.hidden, self.input_size
        shapes = [(4 * hidden, inputs), (4 * hidden, hidden), (4 * hidden,)]
        if self.blobs:
            stored = [tuple(blob.shape) for blob in self.blobs]
            if stored != shapes:
                raise self.error(f"expected blobs of shapes {shapes} (num_output {hidden}, input size "
                                 f"{inputs}), got {stored}")
        else:
            self.blobs = [Blob(shape) for shape in shapes]
            weight_filler = get_filler(param.weight_filler)
            weight_filler.fill(self.blobs[0])
            weight_filler.fill(self.blobs[1])
            get_filler(param.bias_filler).fill(self.blobs[2])
        # The last step's hidden and cell states, carried into the next forward when a clip bottom is given.
        self.last_hidden = Blob((1, hidden))
        self.last_cell = Blob((1, hidden))
        self._saved: tuple[Array, Array, Array, Array, Array] | None = None

    def allow_force_backward(self, bottom_index: int) -> bool:
        """The clip bottom gets no gradient."""
        return bottom_index == 0

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (T, N, num_output); the clip bottom holds one value per time step."""
        steps, num = bottom[0].shape_at(0), bottom[0].shape_at(1)
        inputs = bottom[0].count_between(2, bottom[0].num_axes)
        if inputs != self.input_size:
            raise self.error(f"bottom 0 {list(bottom[0].shape)} has input size {inputs} (axes 2 on); the "
                             f"layer was set up for {self.input_size}")
        if len(bottom) > 1:
            clip = bottom[1]
            if clip.count != steps or clip.shape_at(0) != steps:
                raise self.error(f"bottom 1 (clip) must hold one value per time step, shape ({steps},) or "
                                 f"({steps}, 1, ...), got {list(clip.shape)}")
            if num != 1:
                raise self.error(f"with a clip bottom the fork reads clip[t + n] for sequence n at step t, "
                                 f"which means something only for one sequence; bottom 0 "
                                 f"{list(bottom[0].shape)} has {num}")
        top[0].reshape((steps, num, self.hidden))
        for state in (self.last_hidden, self.last_cell):
            if state.shape != (num, self.hidden):
                state.reshape((num, self.hidden))
                state.mutable_cpu_data()[...] = 0

    def _continuation(self, side: Side, bottom: Sequence[Blob]) -> Array:
        """cont_t per time step, (T, 1, 1): the clip bottom, or t > 0 without one."""
        xp = side.xp
        steps = bottom[0].shape_at(0)
        if len(bottom) > 1:
            return bottom[1].data_on(side).reshape(steps, 1, 1).astype(F32)
        cont = xp.ones((steps, 1, 1), dtype=F32)
        cont[0] = 0
        return cont

    def _initial_states(self, side: Side, bottom: Sequence[Blob]) -> tuple[Array, Array]:
        xp = side.xp
        if len(bottom) > 1:
            return self.last_hidden.data_on(side).copy(), self.last_cell.data_on(side).copy()
        zeros = xp.zeros(self.last_hidden.shape, dtype=F32)
        return zeros, zeros.copy()

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The recurrence, one matrix product per time step; the input projection for all steps at once."""
        xp = side.xp
        steps, num = bottom[0].shape_at(0), bottom[0].shape_at(1)
        hidden = self.hidden
        x = bottom[0].data_on(side).reshape(steps * num, self.input_size)
        weight_i, weight_h, bias = (blob.data_on(side) for blob in self.blobs)
        pre = (x @ weight_i.T + bias).reshape(steps, num, 4 * hidden)
        cont = self._continuation(side, bottom)
        h_0, c_0 = self._initial_states(side, bottom)
        h_prev, c_prev = h_0, c_0
        gates = xp.empty((steps, num, 4 * hidden), dtype=F32)
        cells = xp.empty((steps, num, hidden), dtype=F32)
        out = top[0].mutable_data_on(side)
        for t in range(steps):
            pre[t] += cont[t] * (h_prev @ weight_h.T)
            gate = gates[t]
            gate[:, :3 * hidden] = _sigmoid(xp, pre[t, :, :3 * hidden])
            gate[:, 3 * hidden:] = xp.tanh(pre[t, :, 3 * hidden:])
            i, f, o, g = (gate[:, k * hidden:(k + 1) * hidden] for k in range(4))
            cells[t] = cont[t] * f * c_prev + i * g
            out[t] = o * xp.tanh(cells[t])
            h_prev, c_prev = out[t], cells[t]
        if len(bottom) > 1:
            self.last_hidden.mutable_data_on(side)[...] = out[steps - 1]
            self.last_cell.mutable_data_on(side)[...] = cells[steps - 1]
        # A later in-place layer may rewrite the top: backward reads its own copy of the hidden states.
        self._saved = (gates, cells, out.copy(), h_0, c_0) if self.backward_needed else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Back-propagation through time; param diffs accumulate, the bottom diff is overwritten."""
        xp = side.xp
        steps, num = bottom[0].shape_at(0), bottom[0].shape_at(1)
        hidden = self.hidden
        if self._saved is None:
            raise self.error("backward needs the forward's gates and cells (the net declared no backward)")
        gates, cells, out, h_0, c_0 = self._saved
        weight_i, weight_h = self.blobs[0].data_on(side), self.blobs[1].data_on(side)
        top_diff = top[0].diff_on(side)
        cont = self._continuation(side, bottom)
        pre_diff = xp.empty((steps, num, 4 * hidden), dtype=F32)
        dh_recurrent = xp.zeros((num, hidden), dtype=F32)
        dc_next = xp.zeros((num, hidden), dtype=F32)
        threshold = self.clipping_threshold
        for t in range(steps - 1, -1, -1):
            gate = gates[t]
            i, f, o, g = (gate[:, k * hidden:(k + 1) * hidden] for k in range(4))
            c_prev = cells[t - 1] if t > 0 else c_0
            tanh_c = xp.tanh(cells[t])
            dh = top_diff[t] + dh_recurrent
            dc = dc_next + dh * o * (F32(1) - tanh_c * tanh_c)
            d = pre_diff[t]
            d[:, :hidden] = dc * g * i * (F32(1) - i)
            d[:, hidden:2 * hidden] = cont[t] * dc * c_prev * f * (F32(1) - f)
            d[:, 2 * hidden:3 * hidden] = dh * tanh_c * o * (F32(1) - o)
            d[:, 3 * hidden:] = dc * i * (F32(1) - g * g)
            if threshold > 0:
                xp.clip(d, -threshold, threshold, out=d)
            dc_next = cont[t] * dc * f
            dh_recurrent = cont[t] * (d @ weight_h)
        flat_diff = pre_diff.reshape(steps * num, 4 * hidden)
        if self.param_propagate_down(0):
            x = bottom[0].data_on(side).reshape(steps * num, self.input_size)
            gemm_accumulate(flat_diff.T, x, self.blobs[0].mutable_diff_on(side))
        if self.param_propagate_down(1):
            h_prev = xp.concatenate([h_0[None], out[:steps - 1]]).reshape(steps * num, hidden)
            gemm_accumulate((pre_diff * cont).reshape(steps * num, 4 * hidden).T, h_prev,
                            self.blobs[1].mutable_diff_on(side))
        if self.param_propagate_down(2):
            bias_diff = self.blobs[2].mutable_diff_on(side)
            bias_diff += flat_diff.sum(axis=0)
        if propagate_down[0]:
            bottom_diff = bottom[0].mutable_diff_on(side)
            bottom_diff[...] = (flat_diff @ weight_i).reshape(bottom_diff.shape)
