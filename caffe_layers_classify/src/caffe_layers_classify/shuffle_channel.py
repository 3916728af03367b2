"""ShuffleChannel (farmingyard/ShuffleNet): channels (g, C/g) transposed to (C/g, g)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class ShuffleChannelLayer(Layer):
    """Channel c = i * C/g + j of the bottom becomes channel j * g + i of the top (g = group)."""

    type = "ShuffleChannel"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: (2, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads group."""
        self.group = int(get_param_block(self.layer_param, "shuffle_channel_param").group)
        if self.group <= 0:
            raise self.error("shuffle_channel_param.group must be greater than 0")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top is (num, channels, height, width) by Caffe's legacy accessors, as the fork shapes it."""
        blob = bottom[0]
        if blob.channels % self.group:
            raise self.error(f"the bottom's {blob.channels} channels are not divisible by "
                             f"shuffle_channel_param.group {self.group}")
        top[0].reshape((blob.num, blob.channels, blob.height, blob.width))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top[:, j * g + i] = bottom[:, i * C/g + j]."""
        blob = bottom[0]
        self._shuffle(blob.data_on(side), top[0].mutable_data_on(side), blob.num, blob.channels, self.group)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The inverse shuffle of the top diff: a shuffle with C/g groups."""
        if propagate_down[0]:
            blob = bottom[0]
            self._shuffle(top[0].diff_on(side), blob.mutable_diff_on(side), blob.num, blob.channels,
                          blob.channels // self.group)

    @staticmethod
    def _shuffle(source: Array, target: Array, num: int, channels: int, rows: int) -> None:
        """target[:, j * rows + i] = source[:, i * (channels / rows) + j]."""
        grouped = source.reshape(num, rows, channels // rows, -1)
        target.reshape(num, channels // rows, rows, -1)[...] = grouped.transpose(0, 2, 1, 3)
