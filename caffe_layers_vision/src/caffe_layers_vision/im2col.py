"""Caffe's Im2col layer: the im2col columns of each image as a blob (num, C * prod(kernel), *out)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.layer_bases.kernel_geometry import read_layer_geometry, refuse_empty_output, spatial_shape
from caffe_layers_vision.im2col_ops import batch_first, batch_last, col2im_add, column_view, padded_batch_last
from caffe_layers_vision.workspace import Workspace


class Im2colLayer(Layer):
    """Rearranges image patches into columns, channel-major then kernel offset, as Caffe's im2col."""

    type = "Im2col"
    param_block = "convolution_param"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the kernel geometry from convolution_param with Caffe's checks."""
        self.channel_axis, self.params = read_layer_geometry(self, bottom[0])
        if not self.params.kernel:
            raise self.error(f"im2col needs at least one spatial axis after the channel axis "
                             f"{self.channel_axis} (bottom shape {list(bottom[0].shape)})")
        self.workspace = Workspace()

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the leading axes, C * prod(kernel), then the convolution output size."""
        self.spatial = spatial_shape(self, bottom[0], self.channel_axis, self.params)
        self.num = bottom[0].count_between(0, self.channel_axis)
        self.channels = bottom[0].shape_at(self.channel_axis)
        self.out_spatial = self.params.conv_output_shape(self.spatial)
        refuse_empty_output(self, self.params, self.spatial, self.out_spatial)
        top[0].reshape((*bottom[0].shape[: self.channel_axis], self.channels * math.prod(self.params.kernel),
                        *self.out_spatial))

    def _image_shape(self) -> tuple[int, ...]:
        return (self.num, self.channels, *self.spatial)

    def _columns_shape(self) -> tuple[int, ...]:
        return (self.num, self.channels, *self.params.kernel, *self.out_spatial)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies every kernel window of the zero-padded input into the top."""
        xp = side.xp
        image = bottom[0].data_on(side).reshape(self._image_shape())
        padded = padded_batch_last(xp, image, self.params, self.out_spatial, self.workspace, "padded")
        out = top[0].mutable_data_on(side).reshape(self._columns_shape())
        batch_last(out)[...] = column_view(xp, padded, self.params, self.out_spatial)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """col2im: sums every column entry back onto the pixel it was read from."""
        if not propagate_down[0]:
            return
        xp = side.xp
        shape = (self.channels, *self.params.padded_shape(self.spatial, self.out_spatial), self.num)
        padded = self.workspace.zeros(xp, "padded_diff", shape)
        columns = batch_last(top[0].diff_on(side).reshape(self._columns_shape()))
        col2im_add(columns, padded, self.params, self.out_spatial)
        inner = (slice(None), *(slice(p, p + s) for s, p in zip(self.spatial, self.params.pad, strict=True)),
                 slice(None))
        bottom[0].mutable_diff_on(side).reshape(self._image_shape())[...] = batch_first(padded[inner])
