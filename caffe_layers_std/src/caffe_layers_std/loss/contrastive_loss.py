"""ContrastiveLoss: pulls similar pairs together and pushes dissimilar pairs beyond a margin."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.loss import LossLayer


class ContrastiveLossLayer(LossLayer):
    """sum(sim d^2 + (1 - sim) max(margin - d, 0)^2) / 2N (legacy: max(margin - d^2, 0))."""

    type = "ContrastiveLoss"
    exact_num_bottom_blobs = 3
    bottom_num_axes = {0: (0, 4), 1: (0, 4), 2: (0, 4)}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the pair and similarity shapes and reads margin and legacy_version."""
        super().layer_setup(bottom, top)
        for i in (0, 1):
            if bottom[i].count_between(1) != bottom[i].channels:
                raise self.error(f"bottom {i} must be (N, C) or (N, C, 1, 1), got shape {bottom[i].shape}")
        if bottom[0].channels != bottom[1].channels:
            raise self.error(f"the two feature bottoms must have the same number of channels: "
                             f"{bottom[0].shape} and {bottom[1].shape}")
        if bottom[2].count_between(1) != 1:
            raise self.error(f"the similarity bottom must hold one value per pair, "
                             f"got shape {bottom[2].shape}")
        param = self.layer_param.contrastive_loss_param
        self.margin = param.margin
        self.legacy = param.legacy_version
        self.diff = Blob()
        self.dist_sq = Blob()

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the distance buffers."""
        super().reshape(bottom, top)
        self.num = bottom[0].shape[0]
        self.channels = bottom[0].channels
        self.diff.reshape((self.num, self.channels))
        self.dist_sq.reshape((self.num,))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Keeps a - b and the squared distances for backward."""
        xp = side.xp
        shape = (self.num, self.channels)
        diff = self.diff.mutable_data_on(side)
        diff[...] = bottom[0].data_on(side).reshape(shape) - bottom[1].data_on(side).reshape(shape)
        dist_sq = self.dist_sq.mutable_data_on(side)
        dist_sq[...] = (diff * diff).sum(axis=1)
        similar = bottom[2].data_on(side).reshape(self.num).astype(xp.int64) != 0
        margin = xp.float32(self.margin)
        if self.legacy:
            apart = xp.maximum(margin - dist_sq, 0)
        else:
            apart = xp.maximum(margin - xp.sqrt(dist_sq), 0) ** 2
        loss = xp.where(similar, dist_sq, apart).sum()
        top[0].mutable_data_on(side)[...] = loss / xp.float32(self.num) / 2

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Similar pairs: +-w/N (a - b); dissimilar pairs inside the margin: the hinge's pull, else 0."""
        self.refuse_label_backward(propagate_down, index=2, what="similarity")
        xp = side.xp
        diff = self.diff.data_on(side)
        dist_sq = self.dist_sq.data_on(side)
        similar = (bottom[2].data_on(side).reshape(self.num).astype(xp.int64) != 0).reshape(-1, 1)
        margin = xp.float32(self.margin)
        for i, sign in ((0, 1), (1, -1)):
            if not propagate_down[i]:
                continue
            alpha = top[0].diff_on(side).reshape(()) * xp.float32(sign) / xp.float32(self.num)
            if self.legacy:
                mdist = margin - dist_sq
                beta = -alpha * xp.ones_like(dist_sq)
            else:
                dist = xp.sqrt(dist_sq)
                mdist = margin - dist
                beta = -alpha * mdist / (dist + xp.float32(1e-4))
            apart = xp.where((mdist > 0).reshape(-1, 1), beta.reshape(-1, 1) * diff, xp.float32(0))
            grad = xp.where(similar, alpha * diff, apart)
            out = bottom[i].mutable_diff_on(side)
            out[...] = grad.reshape(out.shape)

    def allow_force_backward(self, bottom_index: int) -> bool:
        """force_backward reaches both feature bottoms, never the similarity bottom."""
        return bottom_index != 2
