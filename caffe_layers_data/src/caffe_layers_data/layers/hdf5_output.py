"""HDF5Output: writes its two bottoms to datasets `data` and `label` of an HDF5 file, in legacy 4-D shapes."""

from __future__ import annotations

from collections.abc import Sequence

import h5py
import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer

DATASET_NAMES = ("data", "label")


def legacy_shape(blob: Blob) -> tuple[int, int, int, int]:
    """(num, channels, height, width), missing axes being 1, as Caffe's 4-D Blob accessors."""
    return blob.num, blob.channels, blob.height, blob.width


class HDF5OutputLayer(Layer):
    """Caffe's HDF5Output layer: the file is created (truncated) at setup and written by one forward."""

    type = "HDF5Output"
    exact_num_bottom_blobs = 2
    exact_num_top_blobs = 0

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates (truncates) the output file."""
        self.file_name = self.layer_param.hdf5_output_param.file_name
        if not self.file_name:
            raise self.error("hdf5_output_param.file_name is required")
        try:
            h5py.File(self.file_name, "w").close()
        except OSError as err:
            raise self.error(f"cannot create HDF5 file {self.file_name}: {err}") from None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """No tops to shape."""

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Writes the bottoms as float32 datasets; a second forward fails, as the datasets exist."""
        if bottom[0].num != bottom[1].num:
            raise self.error(f"data and label must have the same num, got {bottom[0].num} and "
                             f"{bottom[1].num}")
        with h5py.File(self.file_name, "a") as f:
            for name, blob in zip(DATASET_NAMES, bottom, strict=True):
                if name in f:
                    raise self.error(f"dataset '{name}' already exists in {self.file_name}: HDF5Output "
                                     f"writes one forward pass per net")
                values = np.asarray(blob.cpu_data(), np.float32).reshape(legacy_shape(blob))
                f.create_dataset(name, data=values)
