"""compute_image_mean: the mean.binaryproto files Caffe wrote, byte for byte."""

from __future__ import annotations

import pytest

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
