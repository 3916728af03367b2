"""The gaussian filler, with Caffe's optional sparse mask."""

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.fillers.base import Filler


class GaussianFiller(Filler):
    """Fills with N(mean, std); with sparse >= 0 keeps each value with probability sparse / shape[0]."""

    supports_sparse = True

    def fill(self, blob: Blob) -> None:
        """Draws gaussian values and applies the sparse mask."""
        rng = runtime.rng()
        values = rng.normal(self.param.mean, self.param.std, blob.shape)
        if self.param.sparse < -1:
            raise CaffeError(f"gaussian filler: sparse must be >= -1, got {self.param.sparse}")
        if self.param.sparse >= 0:
            if blob.num_axes < 1:
                raise CaffeError("gaussian filler: sparse needs a blob with at least one axis")
            keep = self.param.sparse / blob.shape_at(0)
            values *= rng.random(blob.shape) < keep
        blob.mutable_cpu_data()[...] = values
