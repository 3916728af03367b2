"""Upsample of inisis and the YOLO forks: nearest-neighbour repetition by an integer scale, one bottom."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block

NEAREST_DEFAULT_SCALE = 1


class NearestUpsampleLayer(Layer):
    """y[..., h, w] = x[..., h // scale, w // scale] (dims_num 4) or y[..., w] = x[..., w // scale] (3)."""

    type = "Upsample"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers with one bottom."""
        return len(param.bottom) == 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads scale and dims_num."""
        param = get_param_block(self.layer_param, "upsample_param")
        self.scale = param.scale if param.HasField("scale") else NEAREST_DEFAULT_SCALE
        self.dims_num = param.dims_num
        if self.dims_num not in (3, 4):
            raise self.error(f"upsample_param.dims_num must be 3 (N, C, W) or 4 (N, C, H, W), got "
                             f"{self.dims_num}")
        if self.scale < 1:
            raise self.error(f"upsample_param.scale must be at least 1, got {self.scale}")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the bottom's shape with the last (dims_num 3) or last two (dims_num 4) axes times scale."""
        if bottom[0].num_axes != self.dims_num:
            raise self.error(f"upsample_param.dims_num {self.dims_num} needs a {self.dims_num}-axis bottom, "
                             f"got shape {list(bottom[0].shape)}")
        shape = list(bottom[0].shape)
        for axis in range(2, self.dims_num):
            shape[axis] *= self.scale
        top[0].reshape(shape)

    def _blocks(self, array: Array, blob: Blob) -> Array:
        """A top array viewed with a scale axis after each upsampled axis."""
        s = self.scale
        shape = blob.shape
        if self.dims_num == 4:
            return array.reshape(shape[0], shape[1], shape[2] // s, s, shape[3] // s, s)
        return array.reshape(shape[0], shape[1], shape[2] // s, s)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Repeats each value over its scale x scale block."""
        x = bottom[0].data_on(side)
        spread = x[:, :, :, None, :, None] if self.dims_num == 4 else x[..., None]
        self._blocks(top[0].mutable_data_on(side), top[0])[...] = spread

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Each value's diff is the sum of the top diff over its block (inisis has no backward)."""
        if not propagate_down[0]:
            return
        blocks = self._blocks(top[0].diff_on(side), top[0])
        axes = (3, 5) if self.dims_num == 4 else (3,)
        bottom[0].mutable_diff_on(side)[...] = blocks.sum(axis=axes)
