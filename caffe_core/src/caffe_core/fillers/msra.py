"""The msra (He) filler."""

import math

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler, fan_in_out


class MSRAFiller(Filler):
    """Fills with N(0, sqrt(2/n)), n from variance_norm."""

    def fill(self, blob: Blob) -> None:
        """Draws scaled gaussian values."""
        std = math.sqrt(2.0 / fan_in_out(blob, self.param.variance_norm))
        blob.mutable_cpu_data()[...] = runtime.rng().normal(0.0, std, blob.shape)
