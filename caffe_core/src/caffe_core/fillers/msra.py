"""The msra (He) filler."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler, fan_in_out


class MSRAFiller(Filler):
    """Fills with N(0, sqrt(2/n)), n from variance_norm."""

    def fill(self, blob: Blob) -> None:
        """Draws scaled gaussian values."""
        std = np.sqrt(np.float32(2) / fan_in_out(blob, self.param.variance_norm))
        blob.mutable_cpu_data()[...] = runtime.rng().gaussian(blob.shape, 0.0, std)
