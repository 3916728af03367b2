"""compute_image_mean: the mean.binaryproto files Caffe wrote, byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

from caffe_layers_data.tools import compute_image_mean
from caffe_layers_data.tools.compute_image_mean import main


@pytest.mark.parametrize(("case", "flags"), [("data_lmdb_raw", []), ("data_leveldb", ["-backend=leveldb"])])
def test_mean_file_equals_caffes(golden_copy, case, flags):
    folder, _ = golden_copy(case)
    assert main([*flags, "db", "mine.binaryproto"]) == 0
    assert (folder / "mine.binaryproto").read_bytes() == (folder / "mean.binaryproto").read_bytes()


def test_empty_or_missing_database_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["nowhere", "m.binaryproto"]) == 1
    assert not (tmp_path / "m.binaryproto").exists()


def test_help_shows_caffes_usage_message(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "Compute the mean_image of a set of images given by a leveldb/lmdb" in out


def test_empty_database_error_names_the_default_lmdb_backend(dt, tmp_path, capsys):
    dt.write_db(tmp_path / "db", [])
    assert main([str(tmp_path / "db")]) == 1
    assert f"lmdb database '{tmp_path / 'db'}' is empty" in capsys.readouterr().err


def test_progress_is_logged_every_n_files_and_once_at_the_end(dt, tmp_path, capsys, monkeypatch):
    # compute_image_mean.cpp logs "Processed N files." at each multiple of 10000 and, unless the count is
    # such a multiple, once more at the end (here every 2 files).
    monkeypatch.setattr(compute_image_mean, "LOG_EVERY", 2)
    dt.write_db(tmp_path / "db", [np.zeros((1, 1, 1), np.uint8)] * 2)
    dt.write_db(tmp_path / "db3", [np.zeros((1, 1, 1), np.uint8)] * 3)
    assert main([str(tmp_path / "db")]) == 0
    assert capsys.readouterr().err.count("Processed 2 files.") == 1
    assert main([str(tmp_path / "db3")]) == 0
    err = capsys.readouterr().err
    assert err.count("Processed 2 files.") == 1 and err.count("Processed 3 files.") == 1


def test_writing_the_mean_is_logged_as_caffe(dt, tmp_path, capsys):
    dt.write_db(tmp_path / "db", [np.zeros((1, 1, 1), np.uint8)])
    assert main([str(tmp_path / "db"), str(tmp_path / "m.binaryproto")]) == 0
    assert f"Write to {tmp_path / 'm.binaryproto'}" in capsys.readouterr().err
