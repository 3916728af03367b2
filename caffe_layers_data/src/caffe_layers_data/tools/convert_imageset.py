"""convert_imageset: images listed as `path label` → a database of Datums keyed `%08d_<path>`."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence

import numpy as np

from caffe_core.errors import CaffeError
from caffe_core.logs import init_log
from caffe_core.proto import caffe_pb2
from caffe_layers_data.datum import array_to_datum
from caffe_layers_data.db import open_db
from caffe_layers_data.images import decode_image, encode_image, extension_of, read_file, resize
from caffe_layers_data.layers.image_data import read_image_list
from caffe_layers_data.tools import flags

log = logging.getLogger("caffe.tools")
COMMIT_EVERY = 1000
BOOL_FLAGS = ("gray", "shuffle", "check_size", "encoded")


def image_to_datum(path: str, label: int, color: bool, height: int, width: int,
                   encoding: str) -> caffe_pb2.Datum:
    """ReadImageToDatum: raw BGR planes, or (encoding given) the file's bytes or a re-encoding."""
    raw = read_file(path)
    image = decode_image(raw, color, path)
    if height > 0 and width > 0:
        image = resize(image, height, width)
    if not encoding:
        return array_to_datum(image.transpose(2, 0, 1), label)
    datum = caffe_pb2.Datum()
    keeps_file = ((image.shape[2] == 3) == color and not height and not width
                  and extension_of(path) == encoding.lower())
    datum.data = raw if keeps_file else encode_image(image, encoding, path)
    datum.label = label
    datum.encoded = True
    return datum


def build_parser() -> argparse.ArgumentParser:
    """The command line of Caffe's convert_imageset."""
    parser = argparse.ArgumentParser(
        prog="convert_imageset", allow_abbrev=False,
        description="Convert a set of images to the leveldb/lmdb format used as input for Caffe.")
    parser.add_argument("root_folder", help="ROOTFOLDER/ prepended to every listed path")
    parser.add_argument("list_file", help="LISTFILE: lines 'subfolder1/file1.JPEG 7'")
    parser.add_argument("db_name", help="DB_NAME: the database to create")
    parser.add_argument("--gray", action=argparse.BooleanOptionalAction, default=False,
                        help="treat images as grayscale ones")
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=False,
                        help="randomly shuffle the order of images and their labels")
    parser.add_argument("--backend", default="lmdb", help="lmdb or leveldb")
    parser.add_argument("--resize_width", type=int, default=0, help="width images are resized to")
    parser.add_argument("--resize_height", type=int, default=0, help="height images are resized to")
    parser.add_argument("--check_size", action=argparse.BooleanOptionalAction, default=False,
                        help="when this option is on, check that all the datum have the same size")
    parser.add_argument("--encoded", action=argparse.BooleanOptionalAction, default=False,
                        help="when this option is on, the encoded image will be save in datum")
    parser.add_argument("--encode_type", default="", help="optional: what type should we encode the image as")
    parser.add_argument("--seed", type=int, default=None, help="seed of the --shuffle permutation")
    return parser


def convert(args: argparse.Namespace) -> int:
    """Writes the database; returns the number of images stored."""
    entries = read_image_list(args.list_file)
    if args.shuffle:
        log.info("Shuffling data")
        order = np.random.default_rng(args.seed).permutation(len(entries))
        entries = [entries[i] for i in order]
    log.info("A total of %d images.", len(entries))
    encoded = args.encoded
    if args.encode_type and not encoded:
        log.info("encode_type specified, assuming encoded=true.")
        encoded = True
    # Caffe clamps negative sizes to 0, which keeps the image's own size.
    height, width = max(0, args.resize_height), max(0, args.resize_width)
    count, data_size = 0, None
    with open_db(args.backend, args.db_name, "new") as db:
        txn = db.new_transaction()
        for line_id, (path, label, number) in enumerate(entries):
            encoding = (args.encode_type or extension_of(path)) if encoded else ""
            try:
                datum = image_to_datum(args.root_folder + path, label, not args.gray, height, width, encoding)
            except CaffeError as err:
                log.error("%s line %d: could not read %s: %s", args.list_file, number,
                          args.root_folder + path, err)
                continue
            if args.check_size:
                if data_size is None:
                    data_size = len(datum.data)
                elif len(datum.data) != data_size:
                    raise CaffeError(f"{args.list_file} line {number}: {path} gives {len(datum.data)} bytes, "
                                     f"the first image {data_size} (incorrect data field size)")
            txn.put(b"%08d_%s" % (line_id, path.encode()), datum.SerializeToString())
            count += 1
            if count % COMMIT_EVERY == 0:
                txn.commit()
                log.info("Processed %d files.", count)
        if count % COMMIT_EVERY:
            txn.commit()
            log.info("Processed %d files.", count)
    return count


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the convert_imageset console script."""
    init_log()
    args = flags.parse(build_parser(), argv, BOOL_FLAGS)
    try:
        convert(args)
    except CaffeError as err:
        log.error("%s", err)
        return 1
    return 0
