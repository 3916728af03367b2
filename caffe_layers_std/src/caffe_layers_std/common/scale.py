"""Scale: multiplies by a blob (learned, or the second bottom) broadcast from `axis`, plus optional bias."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_std.common.bias import BiasLayer, broadcast_dims, learned_shape


class ScaleLayer(Layer):
    """y = x * gamma (+ beta); gamma is learned with one bottom, beta is learned when bias_term is set."""

    type = "Scale"
    min_bottom_blobs = 1
    max_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates gamma (constant 1 unless scale_param.filler) and, with bias_term, an inner Bias layer."""
        param = self.layer_param.scale_param
        if len(bottom) == 1 and not self.blobs:
            gamma = Blob(learned_shape(self, bottom[0], param.axis, param.num_axes, "scale_param"))
            filler = param.filler if param.HasField("filler") else caffe_pb2.FillerParameter(
                type="constant", value=1.0)
            get_filler(filler).fill(gamma)
            self.blobs.append(gamma)
        self.bias_layer: BiasLayer | None = None
        if param.bias_term:
            self._setup_bias(bottom, top)
        self.saved_bottom: Array | None = None

    def _setup_bias(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        param = self.layer_param.scale_param
        bias_param = caffe_pb2.LayerParameter()
        bias_param.CopyFrom(self.layer_param)
        del bias_param.blobs[:]
        bias_param.type = "Bias"
        bias_param.bias_param.axis = param.axis
        bias_param.bias_param.num_axes = bottom[1].num_axes if len(bottom) > 1 else param.num_axes
        bias_param.bias_param.filler.CopyFrom(param.bias_filler)
        self.bias_layer = BiasLayer(bias_param)
        self.bias_layer.setup([bottom[0]], top)
        if len(self.blobs) + len(bottom) < 3:
            self.blobs.append(self.bias_layer.blobs[0])
        else:
            self.bias_layer.blobs[0] = self.blobs[-1]

    def _scale(self, bottom: Sequence[Blob]) -> Blob:
        return bottom[1] if len(bottom) > 1 else self.blobs[0]

    def _caffe_accumulates_scale_diff(self) -> bool:
        # Caffe's Scale backward writes the learned gamma's diff directly (dropping what was there) when it
        # has a single outer block and either covers the whole bottom or has more than one entry and an
        # inner extent; it matters with iter_size > 1 or shared params, where Caffe loses the earlier part.
        outer, scale_dim, inner = self.dims
        return outer != 1 or (scale_dim == 1 and inner != 1)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottom's; works out the broadcast."""
        self.dims = broadcast_dims(self, bottom[0], self._scale(bottom), self.layer_param.scale_param.axis,
                                   "scale_param")
        if top[0] is not bottom[0]:
            top[0].reshape_like(bottom[0])
        if self.bias_layer is not None:
            self.bias_layer.reshape([top[0]], top)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = x * gamma (+ beta); in-place use keeps a copy of x for backward."""
        x = bottom[0].data_on(side)
        if top[0] is bottom[0] and self.backward_needed:
            self.saved_bottom = x.copy()
        gamma = self._scale(bottom).data_on(side).reshape(1, -1, 1)
        side.xp.multiply(x.reshape(self.dims), gamma, out=top[0].mutable_data_on(side).reshape(self.dims))
        if self.bias_layer is not None:
            self.bias_layer.forward_on(side, [top[0]], top)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """d beta += sum dy; d gamma = sum dy x (accumulated where Caffe accumulates); dx = dy gamma."""
        if self.bias_layer is not None and self.param_propagate_down(len(self.blobs) - 1):
            self.bias_layer.backward_on(side, top, [False], [top[0]])
        learned = len(bottom) == 1
        scale = self._scale(bottom)
        dy = top[0].diff_on(side).reshape(self.dims)
        if (learned and self.param_propagate_down(0)) or (not learned and propagate_down[1]):
            x = self.saved_bottom if top[0] is bottom[0] else bottom[0].data_on(side)
            assert x is not None  # an in-place forward saved the bottom: the net runs it before backward
            summed = (dy * x.reshape(self.dims)).sum(axis=(0, 2), dtype=side.xp.float32)
            scale_diff = scale.mutable_diff_on(side)
            if learned and self._caffe_accumulates_scale_diff():
                scale_diff += summed.reshape(scale_diff.shape)
            else:
                scale_diff[...] = summed.reshape(scale_diff.shape)
        if propagate_down[0]:
            gamma = scale.data_on(side).reshape(1, -1, 1)
            bottom[0].mutable_diff_on(side)[...] = (dy * gamma).reshape(bottom[0].shape)
