"""The gaussian_unitball filler of happynear's forks (NormFace): N(0, 1) rows scaled to unit L2 norm."""

from __future__ import annotations

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler

F32 = np.float32
EPS = F32(1e-12)


class GaussianUnitBallFiller(Filler):
    """Draws N(0, 1) (the fork ignores mean and std), then divides each item along axis 0 by
    sqrt(sum w^2 + 1e-12)."""

    def fill(self, blob: Blob) -> None:
        """Draws and normalises each row."""
        num = blob.shape_at(0) if blob.num_axes else 1
        values = runtime.rng().gaussian((num, blob.count // num), 0.0, 1.0).astype(F32)
        values *= F32(1) / np.sqrt((values * values).sum(axis=1, keepdims=True) + EPS)
        blob.mutable_cpu_data()[...] = values.reshape(blob.shape)
