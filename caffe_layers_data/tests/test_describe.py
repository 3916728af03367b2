"""How errors name shapes, databases and records."""

from __future__ import annotations

from caffe_layers_data.describe import database_name, record_name, shape_text


def test_shape_database_and_record_names():
    assert shape_text((3, 32, 28)) == "3x32x28"
    database = database_name("lmdb", "train_lmdb")
    assert database == "lmdb database 'train_lmdb'"
    assert record_name(b"00000007_a\xff.png", database) == f"record '00000007_a\ufffd.png' of {database}"
