"""LMDB backend: the map grows when a commit does not fit, as in Caffe."""

from __future__ import annotations

from caffe_layers_data.db import open_db


def test_lmdb_map_grows_when_a_commit_does_not_fit(tmp_path):
    with open_db("lmdb", tmp_path / "db", "new") as db:
        txn = db.new_transaction()
        for i in range(40):
            txn.put(b"%04d" % i, bytes(1 << 21))
        txn.commit()
    with open_db("lmdb", tmp_path / "db", "read") as db:
        cursor = db.new_cursor()
        count = 0
        while cursor.valid():
            count += 1
            cursor.next()
    assert count == 40
