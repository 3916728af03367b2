"""HDF5Data: rows of same-named datasets from a list of HDF5 files, served in order across files."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import h5py
import numpy as np

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_layers_data.generators import unshared_generator

log = logging.getLogger("caffe.data")


class HDF5DataLayer(Layer):
    """Caffe's HDF5Data layer: each top reads the dataset of its name; files are loaded one at a time."""

    type = "HDF5Data"
    exact_num_bottom_blobs = 0
    min_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the file list, loads the first file and shapes the tops."""
        p = self.layer_param.hdf5_data_param
        if self.layer_param.HasField("transform_param"):
            raise self.error("HDF5Data does not transform data; remove transform_param")
        if p.batch_size <= 0:
            raise self.error("hdf5_data_param.batch_size must be positive")
        try:
            with open(p.source, encoding="utf-8") as f:
                self.files = f.read().split()
        except OSError as err:
            raise self.error(f"cannot open HDF5 file list {p.source}: {err.strerror}") from None
        if not self.files:
            raise self.error(f"{p.source} must list at least 1 HDF5 file")
        log.info("Number of HDF5 files: %d", len(self.files))
        self.rng = unshared_generator()
        self.file_order = np.arange(len(self.files))
        if p.shuffle:
            self.rng.shuffle(self.file_order)
        self.file_index = 0
        self._load_file()
        for blob, array in zip(top, self.arrays, strict=True):
            blob.reshape((p.batch_size, *array.shape[1:]))

    def _load_file(self) -> None:
        """Loads every top's dataset from the current file and (with shuffle) permutes its rows."""
        path = self.files[self.file_order[self.file_index]]
        log.info("Loading HDF5 file: %s", path)
        arrays = []
        try:
            with h5py.File(path, "r") as f:
                for name in self.layer_param.top:
                    if name not in f:
                        raise self.error(f"HDF5 file {path} has no dataset '{name}' (datasets: "
                                         f"{', '.join(f.keys())})")
                    arrays.append(np.asarray(f[name][...], dtype=np.float32))
        except OSError as err:
            raise self.error(f"cannot read HDF5 file {path}: {err}") from None
        row_counts = {array.shape[0] if array.ndim else 0 for array in arrays}
        if len(row_counts) != 1 or 0 in row_counts:
            raise self.error(f"HDF5 file {path}: datasets {list(self.layer_param.top)} must have the same, "
                             f"non-zero number of rows; got {[a.shape for a in arrays]}")
        self.arrays = arrays
        self.num_rows = row_counts.pop()
        self.row_order = np.arange(self.num_rows)
        if self.layer_param.hdf5_data_param.shuffle:
            self.rng.shuffle(self.row_order)
        self.next_row = 0
        log.info("Successfully loaded %d rows", self.num_rows)

    def _advance_file(self) -> None:
        """Moves to the next file (reshuffling the file order after the last one) and loads it."""
        if len(self.files) > 1:
            self.file_index += 1
            if self.file_index == len(self.files):
                self.file_index = 0
                if self.layer_param.hdf5_data_param.shuffle:
                    self.rng.shuffle(self.file_order)
                log.info("Looping around to first file.")
            self._load_file()
        else:
            self.next_row = 0
            if self.layer_param.hdf5_data_param.shuffle:
                self.rng.shuffle(self.row_order)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shapes are fixed at setup."""

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the next batch_size rows, crossing file boundaries (one slice per file visited)."""
        batch_size = self.layer_param.hdf5_data_param.batch_size
        filled = 0
        while filled < batch_size:
            take = min(batch_size - filled, self.num_rows - self.next_row)
            rows = self.row_order[self.next_row:self.next_row + take]
            for name, blob, array in zip(self.layer_param.top, top, self.arrays, strict=True):
                if array.shape[1:] != blob.shape[1:]:
                    raise self.error(f"dataset '{name}' has rows of shape {array.shape[1:]} in "
                                     f"{self.files[self.file_order[self.file_index]]}, but "
                                     f"{blob.shape[1:]} in the first file")
                blob.mutable_cpu_data()[filled:filled + take] = array[rows]
            filled += take
            self.next_row += take
            if self.next_row == self.num_rows:
                self._advance_file()
