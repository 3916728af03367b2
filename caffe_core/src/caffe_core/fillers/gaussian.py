"""The gaussian filler, with Caffe's optional sparse mask."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.fillers.base import Filler


class GaussianFiller(Filler):
    """Fills with N(mean, std); with sparse >= 0 keeps each value with probability sparse / shape[0]."""

    supports_sparse = True

    def fill(self, blob: Blob) -> None:
        """Draws gaussian values and applies the sparse mask."""
        if self.param.sparse < -1:
            raise CaffeError(f"gaussian filler: sparse must be >= -1, got {self.param.sparse}")
        if self.param.sparse >= 0 and blob.num_axes < 1:
            raise CaffeError("gaussian filler: sparse needs a blob with at least one axis")
        stream = runtime.rng()
        values = stream.gaussian(blob.shape, self.param.mean, self.param.std)
        if self.param.sparse >= 0:
            keep = np.float32(self.param.sparse) / np.float32(blob.shape_at(0))
            values *= stream.bernoulli(blob.shape, keep)
        blob.mutable_cpu_data()[...] = values
