"""The constant filler."""

from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler


class ConstantFiller(Filler):
    """Fills with `value`."""

    def fill(self, blob: Blob) -> None:
        """Writes the constant."""
        blob.mutable_cpu_data()[...] = self.param.value
