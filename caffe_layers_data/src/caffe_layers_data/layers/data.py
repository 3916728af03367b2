"""Data: Datum records from an LMDB or LevelDB database, in key order, cycling at the end."""

from __future__ import annotations

import logging

import numpy as np

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.datum import datum_to_array, parse_datum
from caffe_layers_data.db import backend_name, open_db
from caffe_layers_data.describe import database_name, record_name
from caffe_layers_data.layers.prefetching import BatchLoader, PrefetchingDataLayer
from caffe_layers_data.transformer import DataTransformer

log = logging.getLogger("caffe.data")


class DatabaseLoader(BatchLoader):
    """Reads batch_size Datums per batch through a database cursor and transforms them."""

    def __init__(self, param: caffe_pb2.LayerParameter, owner: str, output_labels: bool) -> None:
        data_param = param.data_param
        self.batch_size = int(data_param.batch_size)
        self.output_labels = output_labels
        self.name = database_name(backend_name(data_param.backend), data_param.source)
        self.transformer = DataTransformer(param.transform_param, param.phase, owner)
        self.color = self.transformer.decode_color()
        self.db = open_db(data_param.backend, data_param.source, "read")
        self.cursor = self.db.new_cursor()
        if not self.cursor.valid():
            self.db.close()
            raise CaffeError(f"{self.name} is empty")
        log.info("Opened %s", self.name)
        # As Caffe's DataLayer::Skip: with several solvers, rank r keeps records r, r+N, ... of the stream
        # (counting across restarts); a TEST net, run by the root alone, keeps them all.
        train = param.phase == caffe_pb2.TRAIN
        self.shards = runtime.solver_count() if train else 1
        self.shard = runtime.solver_rank() if train else 0
        self.offset = 0

    def _advance(self) -> None:
        self.cursor.next()
        if not self.cursor.valid():
            if runtime.root_solver():
                log.info("Restarting data prefetching from start.")
            self.cursor.seek_to_first()
        self.offset += 1

    def _next_record(self) -> tuple[bytes, bytes]:
        while self.offset % self.shards != self.shard:
            self._advance()
        key, value = self.cursor.key(), self.cursor.value()
        self._advance()
        return key, value

    def load_batch(self) -> list[np.ndarray]:
        """The next batch_size records: transformed data and (when asked) float32 labels."""
        images, labels = [], np.empty(self.batch_size, dtype=np.float32)
        first = None
        for i in range(self.batch_size):
            key, value = self._next_record()
            where = record_name(key, self.name)
            datum = parse_datum(value, where)
            if not datum.encoded:
                self.transformer.note_raw_datum()
            image = datum_to_array(datum, where, self.color)
            self.transformer.check_batch_item(image.shape, where, first)
            first = first or (image.shape, where)
            images.append(image)
            labels[i] = datum.label
        data = self.transformer.transform_all(images)
        return [data, labels] if self.output_labels else [data]

    def close(self) -> None:
        """Closes the database."""
        self.db.close()


class DataLayer(PrefetchingDataLayer):
    """Caffe's Data layer: data_param (source, backend, batch_size, prefetch) and transform_param."""

    type = "Data"

    def create_loader(self, output_labels: bool) -> BatchLoader:
        """Opens the database named by data_param."""
        data_param = self.layer_param.data_param
        if data_param.batch_size <= 0:
            raise self.error("data_param.batch_size must be positive")
        if not data_param.source:
            raise self.error("data_param.source (the database path) is required")
        return DatabaseLoader(self.layer_param, self.describe(), output_labels)
