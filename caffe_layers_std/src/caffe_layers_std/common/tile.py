"""Tile: repeats the bottom `tiles` times along `axis`."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_layers_std.axes import canonical_axis


class TileLayer(Layer):
    """Copies the block of axes [axis, end) `tiles` times; backward sums the copies' diffs."""

    type = "Tile"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top's `axis` dimension is the bottom's times `tiles`."""
        param = self.layer_param.tile_param
        axis = canonical_axis(self, bottom[0], param.axis, "tile_param.axis")
        if not param.HasField("tiles"):
            raise self.error("tile_param.tiles (the number of tiles) must be specified")
        if param.tiles <= 0:
            raise self.error(f"tile_param.tiles must be positive, got {param.tiles}")
        self.tiles = param.tiles
        shape = list(bottom[0].shape)
        shape[axis] *= self.tiles
        top[0].reshape(shape)
        self.outer = bottom[0].count_between(0, axis)
        self.inner = bottom[0].count_between(axis)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Each outer block of the bottom appears `tiles` times in a row."""
        x = bottom[0].data_on(side).reshape(self.outer, 1, self.inner)
        top[0].mutable_data_on(side).reshape(self.outer, self.tiles, self.inner)[...] = x

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom.diff = the sum of the tiles' diffs."""
        if not propagate_down[0]:
            return
        dy = top[0].diff_on(side).reshape(self.outer, self.tiles, self.inner)
        bottom[0].mutable_diff_on(side).reshape(self.outer, self.inner)[...] = dy.sum(axis=1)
