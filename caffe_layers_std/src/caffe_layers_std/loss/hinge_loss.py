"""HingeLoss: one-vs-all hinge (L1) or squared hinge (L2) loss, with scratch kept in the bottom diff."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer, read_labels
from caffe_core.proto import caffe_pb2

NORMS = caffe_pb2.HingeLossParameter


class HingeLossLayer(LossLayer):
    """sum_ij max(0, 1 - delta(label_i = j) x_ij) (or its square) / N."""

    type = "HingeLoss"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads and checks the norm."""
        super().layer_setup(bottom, top)
        self.norm = self.layer_param.hinge_loss_param.norm
        if self.norm not in (NORMS.L1, NORMS.L2):
            raise self.error(f"unknown hinge_loss_param.norm {self.norm}; expected L1 or L2")

    def _signs(self, side: Side, bottom: Sequence[Blob]) -> tuple[int, int, Array]:
        num = bottom[0].shape[0]
        dim = bottom[0].count // num if num else 0
        labels, _ = read_labels(self, side, bottom[1], dim, None)
        xp = side.xp
        flip = xp.where(xp.arange(dim).reshape(1, -1) == labels.reshape(-1, 1)[:num], -1, 1)
        return num, dim, flip.astype(xp.float32)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Writes max(0, 1 + s_ij x_ij) (s = -1 at the label, else 1) into bottom[0]'s diff, then sums."""
        xp = side.xp
        num, dim, flip = self._signs(side, bottom)
        scratch = bottom[0].mutable_diff_on(side).reshape(num, dim)
        scratch[...] = xp.maximum(0, 1 + bottom[0].data_on(side).reshape(num, dim) * flip)
        flat = scratch.reshape(-1)
        total = xp.abs(flat).sum() if self.norm == NORMS.L1 else xp.dot(flat, flat)
        top[0].mutable_data_on(side)[...] = total / xp.float32(num)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Reads the forward's scratch: L1 gives sign(s_ij m_ij) w / N, L2 gives 2 s_ij m_ij w / N."""
        self.refuse_label_backward(propagate_down)
        if not propagate_down[0]:
            return
        xp = side.xp
        num, dim, flip = self._signs(side, bottom)
        scratch = bottom[0].mutable_diff_on(side).reshape(num, dim)
        signed = scratch * flip
        weight = top[0].diff_on(side).reshape(())
        if self.norm == NORMS.L1:
            scratch[...] = xp.sign(signed) * (weight / xp.float32(num))
        else:
            scratch[...] = signed * (weight * xp.float32(2) / xp.float32(num))
