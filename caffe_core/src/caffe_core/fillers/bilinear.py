"""The bilinear filler, for upsampling Deconvolution kernels."""

import math

import numpy as np

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.fillers.base import Filler


class BilinearFiller(Filler):
    """Fills each square k x k kernel with the bilinear interpolation weights."""

    def fill(self, blob: Blob) -> None:
        """Writes the bilinear kernel into every (n, c) slice."""
        if blob.num_axes != 4:
            raise CaffeError(f"bilinear filler needs a 4-D blob, got shape {blob.shape}")
        if blob.width != blob.height:
            raise CaffeError(f"bilinear filler needs square kernels, got {blob.height}x{blob.width}")
        f = math.ceil(blob.width / 2.0)
        c = (blob.width - 1) / (2.0 * f)
        ramp = 1 - np.abs(np.arange(blob.width) / f - c)
        blob.mutable_cpu_data()[...] = np.outer(ramp, ramp)
