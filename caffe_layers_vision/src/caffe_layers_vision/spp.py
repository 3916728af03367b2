"""Caffe's SPP layer: spatial pyramid pooling, one pooling per level, flattened and concatenated."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.pooling import PoolingLayer


class SPPLayer(Layer):
    """Pools level l into 2^l x 2^l bins; pyramid_height 1 gives the pooled (N, C, 1, 1) blob itself."""

    type = "SPP"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks spp_param and the input; the per-level pooling layers are built at reshape."""
        self.pyramid_height = int(self.layer_param.spp_param.pyramid_height)
        if self.pyramid_height < 1:
            raise self.error("spp_param.pyramid_height must be at least 1")
        self.levels: list[tuple[PoolingLayer, Blob]] = []
        self.bottom_size: tuple[int, int] | None = None
        self.level_bottom = Blob()

    def _pooling_param(self, level: int, height: int, width: int) -> caffe_pb2.LayerParameter:
        """Caffe's GetPoolingParam: kernel ceil(size/bins), stride kernel, pad (kernel*bins-size+1) / 2."""
        bins = 2 ** level
        param = caffe_pb2.LayerParameter(name=f"{self.name}/level{level}", type="Pooling", phase=self.phase)
        pool = param.pooling_param
        # SPPParameter.PoolMethod numbers MAX, AVE and STOCHASTIC as PoolingParameter's does.
        pool.pool = cast(caffe_pb2.PoolingParameter.PoolMethod, self.layer_param.spp_param.pool)
        pool.kernel_h, pool.kernel_w = math.ceil(height / bins), math.ceil(width / bins)
        pool.stride_h, pool.stride_w = pool.kernel_h, pool.kernel_w
        pool.pad_h = (pool.kernel_h * bins - height + 1) // 2
        pool.pad_w = (pool.kernel_w * bins - width + 1) // 2
        return param

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """(Re)builds the levels on a new input size; top (N, C * sum 4^l), or (N, C, 1, 1) for one level."""
        num, channels, height, width = bottom[0].shape
        if height <= 0 or width <= 0:
            raise self.error(f"input dimensions cannot be zero (shape {list(bottom[0].shape)})")
        if self.bottom_size != (height, width):
            self.levels = []
            for level in range(self.pyramid_height):
                layer = PoolingLayer(self._pooling_param(level, height, width))
                pooled = Blob()
                layer.setup(bottom[:1], [pooled])
                self.levels.append((layer, pooled))
            self.bottom_size = (height, width)
        for layer, pooled in self.levels:
            layer.reshape(bottom[:1], [pooled])
        if self.pyramid_height == 1:
            top[0].reshape_like(self.levels[0][1])
        else:
            top[0].reshape((num, sum(pooled.count // num for _, pooled in self.levels)))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Pools every level and writes the flattened levels side by side."""
        out = top[0].mutable_data_on(side).reshape(bottom[0].shape_at(0), -1)
        start = 0
        for layer, pooled in self.levels:
            layer.forward_on(side, bottom[:1], [pooled])
            flat = pooled.data_on(side).reshape(out.shape[0], -1)
            out[:, start: start + flat.shape[1]] = flat
            start += flat.shape[1]

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Sums the bottom gradients of every level."""
        if not propagate_down[0]:
            return
        top_diff = top[0].diff_on(side).reshape(bottom[0].shape_at(0), -1)
        level_bottom = self.level_bottom
        level_bottom.reshape(bottom[0].shape)
        level_bottom.share_data(bottom[0])
        total = bottom[0].mutable_diff_on(side)
        total.fill(0)
        start = 0
        for layer, pooled in self.levels:
            width = pooled.count // top_diff.shape[0]
            pooled.mutable_diff_on(side)[...] = top_diff[:, start: start + width].reshape(pooled.shape)
            start += width
            layer.backward_on(side, [pooled], [True], [level_bottom])
            total += level_bottom.diff_on(side)
