"""PReLU: y = max(x, 0) + a_c min(x, 0) with a learned slope per channel (or one shared slope)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer_bases.neuron import NeuronLayer
from caffe_core.proto import caffe_pb2
from caffe_layers_std.rounding import sequential_sum

DEFAULT_SLOPE = 0.25


class PReLULayer(NeuronLayer):
    """Parametric ReLU; the slope blob has shape (C,), or () when channel_shared."""

    type = "PReLU"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates (or checks) the slope blob."""
        param = self.layer_param.prelu_param
        if bottom[0].num_axes < 2:
            raise self.error(f"needs a bottom with at least 2 axes (N, C, ...), got shape {bottom[0].shape}")
        self.channel_shared = param.channel_shared
        channels = bottom[0].shape_at(1)
        expected = 1 if self.channel_shared else channels
        if not self.blobs:
            slope = Blob(() if self.channel_shared else (channels,))
            filler = param.filler if param.HasField("filler") else caffe_pb2.FillerParameter(
                type="constant", value=DEFAULT_SLOPE)
            get_filler(filler).fill(slope)
            self.blobs.append(slope)
        if self.blobs[0].count != expected:
            what = "one shared slope" if self.channel_shared else f"one slope per channel ({channels})"
            raise self.error(f"the slope blob holds {self.blobs[0].count} values but the layer needs {what}")
        self.bottom_memory: Array | None = None

    def _slopes(self, side: Side, bottom: Blob) -> Array:
        """The slopes broadcast against a (N, C, inner) view of the bottom."""
        slope = self.blobs[0].data_on(side).reshape(-1)
        return slope.reshape(1, -1, 1) if not self.channel_shared else slope.reshape(1, 1, 1)

    def _view(self, blob_array: Array, bottom: Blob) -> Array:
        return blob_array.reshape(bottom.shape_at(0), bottom.shape_at(1), -1)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = max(x, 0) + a_c min(x, 0); in-place use keeps a copy of x for backward."""
        xp = side.xp
        x = bottom[0].data_on(side)
        if top[0] is bottom[0]:
            self.bottom_memory = x.copy()
        xv = self._view(x, bottom[0])
        y = xp.maximum(xv, 0) + self._slopes(side, bottom[0]) * xp.minimum(xv, 0)
        top[0].mutable_data_on(side)[...] = y.reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """d slope_c += sum dy x [x <= 0]; dx = dy ([x > 0] + a_c [x <= 0])."""
        xp = side.xp
        x = self.bottom_memory if top[0] is bottom[0] else bottom[0].data_on(side)
        assert x is not None  # an in-place forward saved the bottom, and forward runs before backward
        xv = self._view(x, bottom[0])
        dy = self._view(top[0].diff_on(side), bottom[0])
        if self.param_propagate_down(0):
            contribution = dy * xv * (xv <= 0)
            slope_diff = self.blobs[0].mutable_diff_on(side).reshape(-1)
            # Caffe adds each item's term into the slope's diff in index order; so does this sum.
            terms = contribution.reshape(1, -1) if self.channel_shared else \
                contribution.transpose(1, 0, 2).reshape(slope_diff.shape[0], -1)
            slope_diff[...] = sequential_sum(xp, terms, start=slope_diff)
        if propagate_down[0]:
            dx = dy * xp.where(xv > 0, 1, self._slopes(side, bottom[0]))
            bottom[0].mutable_diff_on(side)[...] = dx.reshape(bottom[0].shape)
