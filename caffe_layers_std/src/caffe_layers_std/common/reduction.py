"""Reduction: SUM, ASUM, SUMSQ or MEAN over every axis from `axis` on, scaled by `coeff`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_std.axes import canonical_axis

OPS = caffe_pb2.ReductionParameter


class ReductionLayer(Layer):
    """Reduces the trailing axes [axis, end) of each leading position to one scalar."""

    type = "Reduction"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads and checks the operation."""
        self.op = self.layer_param.reduction_param.operation
        if self.op not in (OPS.SUM, OPS.ASUM, OPS.SUMSQ, OPS.MEAN):
            raise self.error(f"unknown reduction_param.operation {self.op}; "
                             "expected SUM, ASUM, SUMSQ or MEAN")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top keeps the axes before `axis` (a 0-d blob when axis is 0)."""
        param = self.layer_param.reduction_param
        self.axis = canonical_axis(self, bottom[0], param.axis, "reduction_param.axis")
        top[0].reshape(bottom[0].shape[: self.axis])
        self.num = bottom[0].count_between(0, self.axis)
        self.dim = bottom[0].count_between(self.axis)
        coeff = np.float32(param.coeff)
        self.coeff = coeff / np.float32(self.dim) if self.op == OPS.MEAN else coeff

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top[i] = coeff * reduce(bottom[i, ...])."""
        xp = side.xp
        x = bottom[0].data_on(side).reshape(self.num, self.dim)
        if self.op == OPS.ASUM:
            x = xp.abs(x)
        elif self.op == OPS.SUMSQ:
            x = x * x
        out = top[0].mutable_data_on(side).reshape(self.num)
        out[...] = x.sum(axis=1) * xp.float32(self.coeff)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """SUM/MEAN: coeff * dy; ASUM: coeff * dy * sign(x); SUMSQ: 2 * coeff * dy * x."""
        if not propagate_down[0]:
            return
        xp = side.xp
        scale = (top[0].diff_on(side).reshape(self.num, 1) * xp.float32(self.coeff))
        out = bottom[0].mutable_diff_on(side).reshape(self.num, self.dim)
        if self.op in (OPS.SUM, OPS.MEAN):
            out[...] = scale
            return
        x = bottom[0].data_on(side).reshape(self.num, self.dim)
        if self.op == OPS.ASUM:
            out[...] = xp.sign(x) * scale
        else:
            out[...] = x * (2 * scale)
