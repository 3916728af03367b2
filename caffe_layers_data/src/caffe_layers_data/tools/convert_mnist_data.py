"""convert_mnist_data: MNIST IDX image/label files (gzipped or not) → a database of 1x28x28 Datums."""

from __future__ import annotations

import argparse
import gzip
import logging
import struct
from collections.abc import Sequence

import numpy as np

from caffe_core.errors import CaffeError
from caffe_core.logs import init_log
from caffe_core.proto import caffe_pb2
from caffe_layers_data.db import open_db
from caffe_layers_data.tools import flags

log = logging.getLogger("caffe.tools")
IMAGE_MAGIC, LABEL_MAGIC = 2051, 2049
COMMIT_EVERY = 1000


def read_idx(path: str, magic: int, dims: int) -> np.ndarray:
    """An IDX file's uint8 payload shaped by its header; checks the magic number."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as err:
        raise CaffeError(f"cannot open {path}: {err.strerror}") from None
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    header = 4 * (1 + dims)
    if len(raw) < header or struct.unpack(">i", raw[:4])[0] != magic:
        raise CaffeError(f"{path}: incorrect magic number (expected {magic}: an IDX "
                         f"{'image' if dims == 3 else 'label'} file)")
    shape = struct.unpack(f">{dims}i", raw[4:header])
    payload = np.frombuffer(raw, dtype=np.uint8, offset=header)
    if payload.size != int(np.prod(shape)):
        raise CaffeError(f"{path}: header promises {shape} bytes' worth of items, file holds {payload.size}")
    return payload.reshape(shape)


def convert(images_path: str, labels_path: str, db_path: str, backend: str) -> int:
    """Writes item i as key `%08d` of i; returns the number of items."""
    images = read_idx(images_path, IMAGE_MAGIC, 3)
    labels = read_idx(labels_path, LABEL_MAGIC, 1)
    if len(images) != len(labels):
        raise CaffeError(f"{images_path} holds {len(images)} images but {labels_path} {len(labels)} labels")
    count, rows, cols = images.shape
    with open_db(backend, db_path, "new") as db:
        log.info("Opened %s %s", backend, db_path)
        log.info("A total of %d items.", count)
        log.info("Rows: %d Cols: %d", rows, cols)
        datum = caffe_pb2.Datum(channels=1, height=rows, width=cols)
        txn = db.new_transaction()
        for item in range(count):
            datum.data = images[item].tobytes()
            datum.label = int(labels[item])
            txn.put(b"%08d" % item, datum.SerializeToString())
            if (item + 1) % COMMIT_EVERY == 0:
                txn.commit()
        if count % COMMIT_EVERY:
            txn.commit()
        log.info("Processed %d files.", count)
    return count


def build_parser() -> argparse.ArgumentParser:
    """The command line of Caffe's convert_mnist_data."""
    parser = argparse.ArgumentParser(prog="convert_mnist_data", allow_abbrev=False,
                                     description="Convert the MNIST dataset to the lmdb/leveldb format")
    parser.add_argument("input_image_file")
    parser.add_argument("input_label_file")
    parser.add_argument("output_db_file")
    parser.add_argument("--backend", default="lmdb", help="lmdb or leveldb")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the convert_mnist_data console script."""
    init_log()
    args = flags.parse(build_parser(), argv, ())
    try:
        convert(args.input_image_file, args.input_label_file, args.output_db_file, args.backend)
    except CaffeError as err:
        log.error("%s", err)
        return 1
    return 0
