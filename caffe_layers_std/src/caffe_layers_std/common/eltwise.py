"""Eltwise: element-wise product, (weighted) sum or maximum of bottoms of one shape."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2

PROD = caffe_pb2.EltwiseParameter.PROD
SUM = caffe_pb2.EltwiseParameter.SUM
MAX = caffe_pb2.EltwiseParameter.MAX


class EltwiseLayer(Layer):
    """PROD, SUM (with optional coeff per bottom) or MAX (ties between bottoms 0 and 1 go to 1)."""

    type = "Eltwise"
    min_bottom_blobs = 2
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the operation and checks coeff."""
        param = self.layer_param.eltwise_param
        self.operation = param.operation
        coeff = list(param.coeff)
        if coeff and self.operation != SUM:
            name = caffe_pb2.EltwiseParameter.EltwiseOp.Name(self.operation)
            raise self.error(f"eltwise_param.coeff is only allowed with operation SUM, not {name}")
        if coeff and len(coeff) != len(bottom):
            raise self.error(f"eltwise_param.coeff needs one coefficient per bottom blob: got {len(coeff)} "
                             f"for {len(bottom)} bottoms")
        self.coeffs = coeff or [1.0] * len(bottom)
        self.stable_prod_grad = param.stable_prod_grad
        self.max_index = None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shape: the bottoms' common shape."""
        for i, blob in enumerate(bottom[1:], start=1):
            if blob.shape != bottom[0].shape:
                raise self.error(f"all bottoms must have the same shape: bottom {i} has {blob.shape}, "
                                 f"bottom 0 has {bottom[0].shape}")
        top[0].reshape_like(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Combines the bottoms."""
        xp = side.xp
        data = [blob.data_on(side) for blob in bottom]
        out = top[0].mutable_data_on(side)
        if self.operation == PROD:
            result = data[0] * data[1]
            for d in data[2:]:
                result = result * d
        elif self.operation == SUM:
            result = xp.zeros_like(data[0])
            for coeff, d in zip(self.coeffs, data, strict=True):
                result = result + d * coeff if coeff != 1 else result + d
        else:
            # Bottom 1 wins a tie with bottom 0; later bottoms win only when strictly greater.
            first_wins = data[0] > data[1]
            result = xp.where(first_wins, data[0], data[1])
            index = xp.where(first_wins, 0, 1).astype(xp.int32)
            for i, d in enumerate(data[2:], start=2):
                greater = d > result
                result = xp.where(greater, d, result)
                index = xp.where(greater, i, index).astype(xp.int32)
            self.max_index = index
        out[...] = result

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Routes the top diff to each bottom by the operation's derivative."""
        dy = top[0].diff_on(side)
        for i, blob in enumerate(bottom):
            if not propagate_down[i]:
                continue
            if self.operation == PROD:
                grad = self._product_grad(side, bottom, top, i)
                blob.mutable_diff_on(side)[...] = grad * dy
            elif self.operation == SUM:
                coeff = self.coeffs[i]
                blob.mutable_diff_on(side)[...] = dy if coeff == 1 else dy * coeff
            else:
                blob.mutable_diff_on(side)[...] = side.xp.where(self.max_index == i, dy, 0)

    def _product_grad(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob], i: int) -> Array:
        """The product of the other bottoms (stable_prod_grad), else top / bottom i."""
        if not self.stable_prod_grad:
            return top[0].data_on(side) / bottom[i].data_on(side)
        others = [blob.data_on(side) for j, blob in enumerate(bottom) if j != i]
        grad = others[0].copy()
        for d in others[1:]:
            grad *= d
        return grad
