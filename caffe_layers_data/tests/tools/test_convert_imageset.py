"""convert_imageset: the databases Caffe built for the golden cases, byte for byte, and its flags."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from caffe_core.proto import caffe_pb2
from caffe_layers_data.tools import convert_imageset
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


def test_help_shows_caffes_usage(capsys):
    # gflags: SetUsageMessage("Convert a set of images to the leveldb/lmdb format used as input for Caffe.
    # Usage: convert_imageset [FLAGS] ROOTFOLDER/ LISTFILE DB_NAME");
    # DEFINE_int32(resize_height, 0, "Height images are resized to").
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: convert_imageset ")
    text = " ".join(out.split())
    assert "Convert a set of images to the leveldb/lmdb format used as input for Caffe." in text
    assert "--resize_height RESIZE_HEIGHT height images are resized to" in text.replace("Height", "height")


def test_flag_defaults_are_caffes():
    # The DEFINE_bool/int32/string defaults of tools/convert_imageset.cpp.
    args = convert_imageset.build_parser().parse_args(["root/", "list.txt", "db"])
    names = ("gray", "shuffle", "backend", "resize_width", "resize_height", "check_size", "encoded",
             "encode_type")
    assert {name: getattr(args, name) for name in names} == {
        "gray": False, "shuffle": False, "backend": "lmdb", "resize_width": 0, "resize_height": 0,
        "check_size": False, "encoded": False, "encode_type": ""}


def test_encode_type_alone_turns_encoding_on_and_reencodes(dt, tmp_path, capsys):
    # "encode_type specified, assuming encoded=true."; a PNG asked for as jpg goes through cv::imencode.
    (tmp_path / "list.txt").write_text("\n".join(dt.write_images(tmp_path / "im", 1)) + "\n")
    assert main(["--encode_type=jpg", f"{tmp_path}/im/", str(tmp_path / "list.txt"), str(tmp_path / "db")]
                ) == 0
    assert "encode_type specified, assuming encoded=true." in capsys.readouterr().err
    datum = caffe_pb2.Datum.FromString(dt.read_records(tmp_path / "db")[0][1])
    assert datum.encoded and datum.data[:2] == b"\xff\xd8"


def test_existing_database_is_refused(dt, tmp_path, capsys):
    (tmp_path / "list.txt").write_text("\n".join(dt.write_images(tmp_path / "im", 1)) + "\n")
    (tmp_path / "db").mkdir()
    assert main([f"{tmp_path}/im/", str(tmp_path / "list.txt"), str(tmp_path / "db")]) == 1
    assert f"lmdb database '{tmp_path / 'db'}' already exists" in capsys.readouterr().err


def test_unreadable_image_in_the_middle_does_not_stop_the_rest(dt, tmp_path):
    # convert_imageset.cpp: if (status == false) continue; keys keep their line numbers.
    lines = dt.write_images(tmp_path / "im", 2)
    (tmp_path / "list.txt").write_text("\n".join([lines[0], "missing.png 5", lines[1]]) + "\n")
    assert main([f"{tmp_path}/im/", str(tmp_path / "list.txt"), str(tmp_path / "db")]) == 0
    keys = [key for key, _ in dt.read_records(tmp_path / "db")]
    assert keys == [b"00000000_im 0.png", b"00000002_im 1.png"]


def test_progress_is_logged_at_each_commit_and_at_the_end(dt, tmp_path, capsys, monkeypatch):
    # "Processed N files." after every 1000 (here 2) and once more for the last, partial batch.
    monkeypatch.setattr(convert_imageset, "COMMIT_EVERY", 2)
    (tmp_path / "list.txt").write_text("\n".join(dt.write_images(tmp_path / "im", 3)) + "\n")
    assert main([f"{tmp_path}/im/", str(tmp_path / "list.txt"), str(tmp_path / "db")]) == 0
    err = capsys.readouterr().err
    assert "Processed 2 files." in err and "Processed 3 files." in err


def test_resize_needs_both_height_and_width(dt, tmp_path):
    # ReadImageToCVMat resizes only when height > 0 && width > 0.
    (tmp_path / "list.txt").write_text("\n".join(dt.write_images(tmp_path / "im", 1)) + "\n")
    assert main(["--resize_height=8", f"{tmp_path}/im/", str(tmp_path / "list.txt"), str(tmp_path / "db")]
                ) == 0
    datum = caffe_pb2.Datum.FromString(dt.read_records(tmp_path / "db")[0][1])
    assert (datum.channels, datum.height, datum.width) == (3, 4, 6)


def test_negative_sizes_are_clamped_to_zero_and_keep_the_encoded_file(dt, tmp_path):
    # convert_imageset.cpp: resize_height = std::max<int>(0, FLAGS_resize_height), so -12 resizes nothing and,
    # encoded in the file's own format, the file's bytes are stored as they are.
    (tmp_path / "list.txt").write_text("\n".join(dt.write_images(tmp_path / "im", 1)) + "\n")
    assert main(["-encoded", "--resize_height", "-12", "-resize_width", "-7", f"{tmp_path}/im/",
                 str(tmp_path / "list.txt"), str(tmp_path / "db")]) == 0
    datum = caffe_pb2.Datum.FromString(dt.read_records(tmp_path / "db")[0][1])
    assert datum.encoded and datum.data == (tmp_path / "im" / "im 0.png").read_bytes()
