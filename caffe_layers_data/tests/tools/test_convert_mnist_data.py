"""convert_mnist_data: IDX files (gzipped or not) to keys %08d holding 1x28x28 Datums."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
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
