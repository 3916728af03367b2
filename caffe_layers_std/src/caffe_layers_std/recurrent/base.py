"""RecurrentLayer: what RNN and LSTM share (Caffe's recurrent_layer.cpp), computed directly over time.

Caffe unrolls an internal net; here each subclass runs its recurrence with whole-batch array operations,
one loop step per timestep. The observable behaviour is Caffe's:
- bottoms: x (T, N, ...), cont (T, N), optional x_static (N, ...), then with `expose_hidden` the initial
  states (1, N, num_output); tops: the output (T, N, num_output), then with `expose_hidden` the final states;
- without `expose_hidden` the final states of one forward are the initial states of the next (a fresh
  layer starts from zeros); with it the state bottoms get no gradient and the state tops' diffs are ignored;
- no gradient reaches cont; x (and x_static) always receive their diff, and the learnable blobs
  accumulate theirs, as Caffe's unrolled net does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blas import gemm_accumulate
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


@dataclass(frozen=True)
class ParamSpec:
    """One learnable blob of a recurrent layer, in Caffe's order."""

    name: str
    shape: tuple[int, ...]
    is_bias: bool = False


class RecurrentLayer(Layer):
    """The base of RNN and LSTM: blob checks, hidden-state carrying, learnable blobs and I/O layout."""

    state_count = 1
    # Caffe's blob names in the recurrence's input, W x_t + b [+ W_static x_static] + W_h (cont_t h_{t-1}).
    input_weight = ""
    input_bias = ""
    static_weight = ""
    recurrent_weight = ""

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        super().__init__(param)
        self.expose_hidden = param.recurrent_param.expose_hidden
        self.num_output = param.recurrent_param.num_output
        exposed = self.state_count if self.expose_hidden else 0
        self.min_bottom_blobs = 2 + exposed
        self.max_bottom_blobs = 3 + exposed
        self.exact_num_top_blobs = 1 + exposed

    def param_specs(self) -> list[ParamSpec]:
        """The learnable blobs in Caffe's order (read after the input sizes are known)."""
        raise NotImplementedError

    def forward_sequence(self, xp: ArrayModule, side: Side, x: Array, cont: Array,
                         x_static: Array | None, initial: list[Array]) -> tuple[Array, list[Array]]:
        """Runs all timesteps: x (T, N, I), cont (T, N), states (N, H) -> output (T, N, H), final states."""
        raise NotImplementedError

    def backward_sequence(self, xp: ArrayModule, side: Side,
                          output_diff: Array) -> tuple[Array, Array | None]:
        """From the output diff (T, N, H): accumulates param diffs, returns (x diff, x_static diff)."""
        raise NotImplementedError

    def allow_force_backward(self, bottom_index: int) -> bool:
        """No gradient can reach the sequence continuation indicators."""
        return bottom_index != 1

    # ----- setup -----
    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads T and N, detects the static input and creates (or checks) the learnable blobs."""
        if bottom[0].num_axes < 2:
            raise self.error(f"bottom[0] must have at least 2 axes -- (#timesteps, #streams, ...); "
                             f"got shape {bottom[0].shape}")
        self.timesteps, self.streams = bottom[0].shape[0], bottom[0].shape[1]
        self._check_cont(bottom[1])
        if self.num_output <= 0:
            raise self.error("recurrent_param.num_output must be positive")
        exposed = self.state_count if self.expose_hidden else 0
        self.static_input = len(bottom) > 2 + exposed
        self.input_dim = bottom[0].count_between(2)
        self.static_dim = 0
        if self.static_input:
            if bottom[2].num_axes < 1 or bottom[2].shape[0] != self.streams:
                raise self.error(f"bottom[2] (x_static) must have shape ({self.streams}, ...), one row per "
                                 f"stream; got {bottom[2].shape}")
            self.static_dim = bottom[2].count_between(1)
        specs = self.param_specs()
        self.param_index = {spec.name: i for i, spec in enumerate(specs)}
        if self.blobs:
            self._check_stored_blobs(specs)
        else:
            self._create_blobs(specs)
        self.states = [Blob() for _ in range(self.state_count)]

    def _create_blobs(self, specs: list[ParamSpec]) -> None:
        recurrent = self.layer_param.recurrent_param
        for spec in specs:
            blob = Blob(spec.shape)
            get_filler(recurrent.bias_filler if spec.is_bias else recurrent.weight_filler).fill(blob)
            self.blobs.append(blob)

    def _check_stored_blobs(self, specs: list[ParamSpec]) -> None:
        expected = [spec.shape for spec in specs]
        stored = [blob.shape for blob in self.blobs]
        if stored != expected:
            names = ", ".join(spec.name for spec in specs)
            raise self.error(f"stored learnable blobs have shapes {stored}; expected {expected} ({names})")

    def _check_cont(self, cont: Blob) -> None:
        if cont.num_axes != 2 or cont.shape != (self.timesteps, self.streams):
            raise self.error(f"bottom[1] (cont) must have exactly 2 axes -- (#timesteps, #streams) = "
                             f"({self.timesteps}, {self.streams}); got shape {cont.shape}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the bottoms against T and the input sizes; shapes the output and state blobs."""
        if bottom[0].num_axes < 2:
            raise self.error(f"bottom[0] must have at least 2 axes -- (#timesteps, #streams, ...); "
                             f"got shape {bottom[0].shape}")
        if bottom[0].shape[0] != self.timesteps:
            raise self.error(f"input number of timesteps changed from {self.timesteps} to "
                             f"{bottom[0].shape[0]}")
        self.streams = bottom[0].shape[1]
        self._check_cont(bottom[1])
        if bottom[0].count_between(2) != self.input_dim:
            raise self.error(f"input size incompatible with the layer's parameters: each timestep of x has "
                             f"{bottom[0].count_between(2)} values, the weights expect {self.input_dim}")
        if self.static_input and (bottom[2].shape[:1] != (self.streams,)
                                  or bottom[2].count_between(1) != self.static_dim):
            raise self.error(f"bottom[2] (x_static) must have {self.streams} rows of {self.static_dim} "
                             f"values; got shape {bottom[2].shape}")
        state_shape = (1, self.streams, self.num_output)
        for state in self.states:
            state.reshape(state_shape)
        top[0].reshape((self.timesteps, self.streams, self.num_output))
        if self.expose_hidden:
            first = 2 + int(self.static_input)
            for index in range(first, len(bottom)):
                if bottom[index].shape != state_shape:
                    raise self.error(f"bottom[{index}] shape must match the hidden state input shape "
                                     f"{state_shape}; got {bottom[index].shape}")
            for blob in top[1:]:
                blob.reshape(state_shape)

    # ----- forward / backward -----
    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Runs the sequence from the exposed or carried-over initial states."""
        xp = side.xp
        shape = (self.streams, self.num_output)
        x = bottom[0].data_on(side).reshape(self.timesteps, self.streams, self.input_dim)
        x_static = None
        if self.static_input:
            x_static = bottom[2].data_on(side).reshape(self.streams, self.static_dim)
        sources = bottom[len(bottom) - self.state_count:] if self.expose_hidden else self.states
        initial = [blob.data_on(side).reshape(shape).copy() for blob in sources]
        output, final = self.forward_sequence(xp, side, x, bottom[1].data_on(side), x_static, initial)
        top[0].mutable_data_on(side)[...] = output
        for blob, value in zip(top[1:] if self.expose_hidden else self.states, final, strict=True):
            blob.mutable_data_on(side)[...] = value.reshape(blob.shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Back-propagates through time to x, x_static and the learnable blobs."""
        output_diff = top[0].diff_on(side)
        x_diff, static_diff = self.backward_sequence(side.xp, side, output_diff)
        bottom[0].mutable_diff_on(side)[...] = x_diff.reshape(bottom[0].shape)
        if self.static_input:
            assert static_diff is not None  # backward_sequence returns it whenever there is x_static
            bottom[2].mutable_diff_on(side)[...] = static_diff.reshape(bottom[2].shape)

    # ----- helpers for subclasses -----
    def param_data(self, side: Side, name: str) -> Array:
        """A learnable blob's data, by its Caffe name."""
        return self.blobs[self.param_index[name]].data_on(side)

    def accumulate_param_diff(self, side: Side, name: str, value: Array) -> None:
        """Adds to a learnable blob's diff, as Caffe's shared unrolled parameters accumulate."""
        blob = self.blobs[self.param_index[name]]
        blob.mutable_diff_on(side)[...] += value.reshape(blob.shape)

    def accumulate_weight_gradient(self, side: Side, name: str, a: Array, b: Array) -> None:
        """Adds a @ b to a learnable weight's diff in place, as one GEMM with beta = 1."""
        blob = self.blobs[self.param_index[name]]
        gemm_accumulate(a, b, blob.mutable_diff_on(side).reshape(a.shape[0], b.shape[1]))

    def project_inputs(self, xp: ArrayModule, side: Side, x: Array, x_static: Array | None) -> Array:
        """W x_t + b [+ W_static x_static] for all timesteps at once (T, N, gates): the part without h."""
        projected = xp.matmul(x, self.param_data(side, self.input_weight).T)
        projected += self.param_data(side, self.input_bias)
        if x_static is not None:
            projected += xp.matmul(x_static, self.param_data(side, self.static_weight).T)
        return projected

    def backward_projections(self, xp: ArrayModule, side: Side, pre_diff: Array, x: Array,
                             x_static: Array | None, h_conted: Array) -> tuple[Array, Array | None]:
        """Accumulates the diffs of W, b, W_static and W_h; returns the diffs of x and x_static."""
        flat_diff = pre_diff.reshape(-1, pre_diff.shape[-1])
        flat_x = x.reshape(-1, x.shape[-1])
        self.accumulate_weight_gradient(side, self.input_weight, flat_diff.T, flat_x)
        self.accumulate_param_diff(side, self.input_bias, flat_diff.sum(axis=0))
        flat_h_conted = h_conted.reshape(-1, self.num_output)
        self.accumulate_weight_gradient(side, self.recurrent_weight, flat_diff.T, flat_h_conted)
        static_diff = None
        if x_static is not None:
            summed = pre_diff.sum(axis=0)
            self.accumulate_weight_gradient(side, self.static_weight, summed.T, x_static)
            static_diff = xp.matmul(summed, self.param_data(side, self.static_weight))
        return xp.matmul(pre_diff, self.param_data(side, self.input_weight)), static_diff
