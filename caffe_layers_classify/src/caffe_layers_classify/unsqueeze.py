"""Unsqueeze (inisis/caffe): the bottom with a new axis of size 1 inserted at unsqueeze_param.dim."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class UnsqueezeLayer(Layer):
    """Inserts an axis of size 1; a negative dim counts from the end (dim + num_axes + 1)."""

    type = "Unsqueeze"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dim, which the fork's proto declares required."""
        param = get_param_block(self.layer_param, "unsqueeze_param")
        if not param.HasField("dim"):
            raise self.error("unsqueeze_param.dim must be set (it is a required field)")
        self.dim = param.dim
        self._axis(bottom[0])

    def _axis(self, bottom: Blob) -> int:
        axes = bottom.num_axes
        axis = self.dim + axes + 1 if self.dim < 0 else self.dim
        if not 0 <= axis <= axes:
            raise self.error(f"unsqueeze_param.dim {self.dim} is outside [{-axes - 1}, {axes}] for a bottom "
                             f"of shape {list(bottom.shape)}")
        return axis

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The bottom's shape with a 1 inserted at the axis."""
        axis = self._axis(bottom[0])
        shape = bottom[0].shape
        top[0].reshape((*shape[:axis], 1, *shape[axis:]))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the data."""
        top[0].mutable_data_on(side).reshape(-1)[...] = bottom[0].data_on(side).reshape(-1)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Copies the diff back (the fork's Backward_cpu is empty)."""
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side).reshape(-1)[...] = top[0].diff_on(side).reshape(-1)
