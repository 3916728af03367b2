"""The xavier filler."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler, fan_in_out


class XavierFiller(Filler):
    """Fills with U(-sqrt(3/n), sqrt(3/n)), n from variance_norm."""

    def fill(self, blob: Blob) -> None:
        """Draws scaled uniform values."""
        scale = np.sqrt(np.float32(3) / fan_in_out(blob, self.param.variance_norm))
        blob.mutable_cpu_data()[...] = runtime.rng().uniform(blob.shape, -scale, scale)
