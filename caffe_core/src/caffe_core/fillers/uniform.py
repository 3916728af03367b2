"""The uniform filler."""

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler


class UniformFiller(Filler):
    """Fills with U(min, max)."""

    def fill(self, blob: Blob) -> None:
        """Draws uniform values."""
        blob.mutable_cpu_data()[...] = runtime.rng().uniform(blob.shape, self.param.min, self.param.max)
