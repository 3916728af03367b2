"""convert_imageset: the databases Caffe built for the golden cases, byte for byte, and its flags."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from caffe_core.proto import caffe_pb2
from caffe_layers_data.tools.convert_imageset import main


@pytest.mark.parametrize(("case", "flags"), [("data_lmdb_raw", []),
                                             ("data_lmdb_encoded", ["-encoded", "-encode_type=png"])])
def test_lmdb_records_equal_caffes(dt, golden_copy, case, flags):
    golden_copy(case)
    assert main([*flags, "images/", "list.txt", "mine"]) == 0
    assert dt.read_records("mine") == dt.read_records("db")


def test_leveldb_records_equal_caffes(dt, golden_copy):
    golden_copy("data_leveldb")
    assert main(["--backend=leveldb", "images/", "list.txt", "mine"]) == 0
    assert dt.read_records("mine", "leveldb") == dt.read_records("db", "leveldb")


def test_gray_resize_and_keys(dt, golden_copy):
    golden_copy("data_lmdb_raw")
    assert main(["--gray", "--resize_height", "8", "--resize_width=10", "--check_size", "images/",
                 "list.txt", "mine"]) == 0
    items = dt.read_records("mine")
    assert items[0][0] == b"00000000_img_00_rgb.png" and len(items) == 24
    datum = caffe_pb2.Datum.FromString(items[3][1])
    assert (datum.channels, datum.height, datum.width, datum.label) == (1, 8, 10, (7 * 3 + 3) % 10)


def test_shuffle_keeps_every_image_and_numbers_keys_in_the_new_order(dt, golden_copy):
    golden_copy("data_lmdb_raw")
    assert main(["-shuffle", "--seed=3", "images/", "list.txt", "mine"]) == 0
    keys = [k.decode() for k, _ in dt.read_records("mine")]
    assert sorted(k[9:] for k in keys) == sorted(line.split()[0] for line in open("list.txt"))
    assert [k[:8] for k in keys] == [f"{i:08d}" for i in range(24)]
    assert [k[9:] for k in keys] != sorted(k[9:] for k in keys)


def test_unreadable_image_is_skipped_with_an_error_naming_the_line(dt, golden_copy, capsys):
    golden_copy("data_lmdb_raw")
    with open("list.txt", "a") as f:
        f.write("missing.png 1\n")
    assert main(["images/", "list.txt", "mine"]) == 0
    assert len(dt.read_records("mine")) == 24
    assert "list.txt line 25: could not read images/missing.png" in capsys.readouterr().err


def test_check_size_rejects_a_different_size(golden_copy, capsys):
    golden_copy("data_lmdb_raw")
    Image.fromarray(np.zeros((3, 3, 3), np.uint8)).save("images/small.png")
    with open("list.txt", "a") as f:
        f.write("small.png 1\n")
    assert main(["--check_size", "images/", "list.txt", "mine"]) == 1
    assert "list.txt line 25: small.png gives 27 bytes, the first image 960" in capsys.readouterr().err
