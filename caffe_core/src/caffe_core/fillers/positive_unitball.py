"""The positive_unitball filler."""

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers.base import Filler


class PositiveUnitballFiller(Filler):
    """Fills with U(0, 1) values, each item along axis 0 normalised to sum to 1."""

    def fill(self, blob: Blob) -> None:
        """Draws and normalises."""
        num = blob.shape_at(0) if blob.num_axes else 1
        values = runtime.rng().uniform(0.0, 1.0, (num, blob.count // num))
        values /= values.sum(axis=1, keepdims=True)
        blob.mutable_cpu_data()[...] = values.reshape(blob.shape)
