"""Pooling as ChenYingpeng/darknet2caffe's Caffe computes it: one more window on each axis when the kernel
exceeds the stride by an odd number, which keeps darknet's size-2 stride-1 maxpool at its input's size."""

from __future__ import annotations

import math
from collections.abc import Sequence

from caffe_core.proto import caffe_pb2
from caffe_layers_vision.pooling import PoolingLayer

PoolingParameter = caffe_pb2.PoolingParameter


def _geometry(pool: caffe_pb2.PoolingParameter) -> tuple[int, int, int]:
    """The (kernel, stride, pad) of the height axis as a PoolingParameter gives them."""
    kernel = pool.kernel_size if pool.HasField("kernel_size") else pool.kernel_h
    stride = pool.stride_h if pool.HasField("stride_h") else pool.stride
    pad = pool.pad_h if pool.HasField("pad_h") else pool.pad
    return kernel, stride, pad


class DarknetPoolingLayer(PoolingLayer):
    """Chen's Pooling: ceil rounding, then a window more on both axes when kernel_h - stride_h is odd."""

    @classmethod
    def accepts_in_net(cls, param: caffe_pb2.LayerParameter,
                       net: Sequence[caffe_pb2.LayerParameter]) -> bool:
        """unpadded stride-1 MAX pools with an even kernel in nets with an Upsample layer (darknet's YOLO)."""
        pool = param.pooling_param
        kernel, stride, pad = _geometry(pool)
        darknet_maxpool = (pool.pool == PoolingParameter.MAX and not pool.global_pooling and stride == 1
                           and pad == 0 and kernel % 2 == 0)
        return darknet_maxpool and any(layer.type == "Upsample" for layer in net)

    def _rounded(self, axis: int) -> int:
        size, kernel, pad, stride = self.in_size[axis], self.kernel[axis], self.pad[axis], self.stride[axis]
        # Chen tests the height axis only and widens both axes; his Caffe has no round_mode.
        extra = (self.kernel[0] - self.stride[0]) % 2
        return math.ceil((size + 2 * pad - kernel) / stride) + 1 + extra
