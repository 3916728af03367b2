"""compute_image_mean: the per-element mean of a Datum database, as a legacy 1xCxHxW BlobProto."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

import numpy as np

from caffe_core import proto_io
from caffe_core.errors import CaffeError
from caffe_core.logs import init_log
from caffe_core.proto import caffe_pb2
from caffe_layers_data.datum import datum_to_array, parse_datum
from caffe_layers_data.db import open_db
from caffe_layers_data.describe import database_name, record_name, shape_text
from caffe_layers_data.tools import flags

log = logging.getLogger("caffe.tools")
LOG_EVERY = 10000


def compute_mean(backend: str, source: str) -> np.ndarray:
    """The float32 CxHxW mean over every record (encoded ones decoded natively), summed in float32."""
    database = database_name(backend, source)
    with open_db(backend, source, "read") as db:
        cursor = db.new_cursor()
        if not cursor.valid():
            raise CaffeError(f"{database} is empty")
        total: np.ndarray | None = None
        count = 0
        while cursor.valid():
            where = record_name(cursor.key(), database)
            image = datum_to_array(parse_datum(cursor.value(), where), where, None)
            if total is None:
                total = np.zeros(image.shape, dtype=np.float32)
            elif image.shape != total.shape:
                raise CaffeError(f"{where} is {shape_text(image.shape)}, the first record "
                                 f"{shape_text(total.shape)} (incorrect data field size)")
            total += image
            count += 1
            if count % LOG_EVERY == 0:
                log.info("Processed %d files.", count)
            cursor.next()
    if count % LOG_EVERY:
        log.info("Processed %d files.", count)
    # The database was not empty, so the loop summed at least one record.
    assert total is not None
    return total / np.float32(count)


def mean_to_proto(mean: np.ndarray) -> caffe_pb2.BlobProto:
    """A BlobProto with legacy num=1, channels, height, width."""
    proto = caffe_pb2.BlobProto()
    proto.num = 1
    proto.channels, proto.height, proto.width = (int(d) for d in mean.shape)
    proto.data.extend(mean.ravel().tolist())
    return proto


def build_parser() -> argparse.ArgumentParser:
    """The command line of Caffe's compute_image_mean."""
    parser = argparse.ArgumentParser(prog="compute_image_mean", allow_abbrev=False,
                                     description="Compute the mean_image of a set of images given by a "
                                                 "leveldb/lmdb")
    parser.add_argument("input_db", help="INPUT_DB")
    parser.add_argument("output_file", nargs="?", help="[OUTPUT_FILE] (.binaryproto)")
    parser.add_argument("--backend", default="lmdb", help="the backend {leveldb, lmdb} containing the images")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the compute_image_mean console script."""
    init_log()
    args = flags.parse(build_parser(), argv, ())
    try:
        mean = compute_mean(args.backend, args.input_db)
    except CaffeError as err:
        log.error("%s", err)
        return 1
    if args.output_file:
        log.info("Write to %s", args.output_file)
        proto_io.write_binary_file(args.output_file, mean_to_proto(mean))
    log.info("Number of channels: %d", mean.shape[0])
    for c, value in enumerate(mean.reshape(mean.shape[0], -1).mean(axis=1, dtype=np.float64)):
        log.info("mean_value channel [%d]: %g", c, value)
    return 0
