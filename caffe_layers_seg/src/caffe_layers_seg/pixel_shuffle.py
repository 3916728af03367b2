"""PixelShuffle of inisis: depth to space, torch.nn.PixelShuffle's layout."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class PixelShuffleLayer(Layer):
    """y[n, c, h r + i, w r + j] = x[n, c r^2 + i r + j, h, w] for upscale factor r."""

    type = "PixelShuffle"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads upscale_factor (required)."""
        param = get_param_block(self.layer_param, "pixelshuffle_param")
        if not param.HasField("upscale_factor"):
            raise self.error("pixelshuffle_param.upscale_factor is required")
        if param.upscale_factor < 1:
            raise self.error(f"pixelshuffle_param.upscale_factor must be positive, got "
                             f"{param.upscale_factor}")
        self.factor = param.upscale_factor

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C // r^2, H r, W r); as in inisis, C need only be a multiple of r (the rest is unused)."""
        num, channels, height, width = bottom[0].shape
        r = self.factor
        if channels % r:
            raise self.error(f"the input's {channels} channels are not a multiple of "
                             f"pixelshuffle_param.upscale_factor {r}")
        top[0].reshape((num, channels // (r * r), height * r, width * r))

    def _used(self, array: Array, bottom: Blob, top: Blob) -> Array:
        """The bottom channels the top uses, as (N, C_out, r, r, H, W)."""
        num, channels, height, width = bottom.shape
        r = self.factor
        return array[:, : top.channels * r * r].reshape(num, top.channels, r, r, height, width)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Moves each group of r^2 channels into r x r blocks."""
        used = self._used(bottom[0].data_on(side), bottom[0], top[0])
        top[0].mutable_data_on(side)[...] = used.transpose(0, 1, 4, 2, 5, 3).reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """The inverse permutation of the top diff (inisis has no backward); unused channels get 0."""
        if not propagate_down[0]:
            return
        num, channels_out, height, width = top[0].shape
        r = self.factor
        dy = top[0].diff_on(side).reshape(num, channels_out, height // r, r, width // r, r)
        dx = bottom[0].mutable_diff_on(side)
        dx.fill(0)
        self._used(dx, bottom[0], top[0])[...] = dy.transpose(0, 1, 3, 5, 2, 4)
