"""convert_mnist_data: IDX files (gzipped or not) to keys %08d holding 1x28x28 Datums."""

from __future__ import annotations

import gzip
import re
import struct

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_layers_data.tools import convert_mnist_data
from caffe_layers_data.tools.convert_mnist_data import main

IMAGES = np.random.default_rng(0).integers(0, 256, (1203, 28, 28), dtype=np.uint8)
LABELS = np.random.default_rng(1).integers(0, 10, 1203, dtype=np.uint8)


@pytest.fixture
def idx(tmp_path):
    images = struct.pack(">iiii", 2051, len(IMAGES), 28, 28) + IMAGES.tobytes()
    labels = struct.pack(">ii", 2049, len(LABELS)) + LABELS.tobytes()
    (tmp_path / "images.gz").write_bytes(gzip.compress(images))
    (tmp_path / "labels").write_bytes(labels)
    return tmp_path


def _check(items):
    assert [k for k, _ in items] == [b"%08d" % i for i in range(len(IMAGES))]
    datum = caffe_pb2.Datum.FromString(items[1202][1])
    assert (datum.channels, datum.height, datum.width, datum.label) == (1, 28, 28, LABELS[1202])
    assert datum.data == IMAGES[1202].tobytes() and not datum.HasField("encoded")


def test_lmdb(dt, idx):
    assert main([str(idx / "images.gz"), str(idx / "labels"), str(idx / "db"), "--backend=lmdb"]) == 0
    _check(dt.read_records(idx / "db"))


def test_leveldb(dt, idx):
    assert main([str(idx / "images.gz"), str(idx / "labels"), str(idx / "db"), "-backend", "leveldb"]) == 0
    _check(dt.read_records(idx / "db", "leveldb"))


def test_swapped_files_fail_on_the_magic_number(idx, capsys):
    assert main([str(idx / "labels"), str(idx / "images.gz"), str(idx / "db")]) == 1
    assert "labels: incorrect magic number (expected 2051" in capsys.readouterr().err


def test_help_and_default_backend_are_caffes(capsys):
    # DEFINE_string(backend, "lmdb", ...); the usage names the tool convert_mnist_data.
    args = convert_mnist_data.build_parser().parse_args(["images", "labels", "db"])
    assert args.backend == "lmdb"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith("usage: convert_mnist_data ")


def test_every_item_is_stored_when_the_count_is_a_multiple_of_the_commit_size(dt, tmp_path, monkeypatch,
                                                                              capsys):
    # Caffe commits after every 1000th item (here 2nd) and once more only if items are left over; the last
    # log line is "Processed N files.".
    monkeypatch.setattr(convert_mnist_data, "COMMIT_EVERY", 2)
    images = struct.pack(">iiii", 2051, 4, 28, 28) + IMAGES[:4].tobytes()
    labels = struct.pack(">ii", 2049, 4) + LABELS[:4].tobytes()
    (tmp_path / "images").write_bytes(images)
    (tmp_path / "labels").write_bytes(labels)
    assert main([str(tmp_path / "images"), str(tmp_path / "labels"), str(tmp_path / "db")]) == 0
    assert [k for k, _ in dt.read_records(tmp_path / "db")] == [b"%08d" % i for i in range(4)]
    assert re.search(r"\] Processed 4 files\.$", capsys.readouterr().err, re.MULTILINE)
