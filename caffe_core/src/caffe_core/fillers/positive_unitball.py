"""The positive_unitball filler."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler


class PositiveUnitballFiller(Filler):
    """Fills with U(0, 1) values, each item along axis 0 normalised to sum to 1."""

    def fill(self, blob: Blob) -> None:
        """Draws and normalises."""
        num = blob.shape_at(0) if blob.num_axes else 1
        values = runtime.rng().uniform((num, blob.count // num), 0.0, 1.0)
        # Caffe sums each row in order, in float (cumsum keeps that order; sum() would pair them up).
        values /= np.cumsum(values, axis=1)[:, -1:]
        blob.mutable_cpu_data()[...] = values.reshape(blob.shape)
