"""Database backends: found through the caffe_db_backends hook, key-ordered cursors, batched writes."""

from __future__ import annotations

import pytest

from caffe_core.errors import CaffeError
from caffe_layers_data.db import db_backends, open_db
from caffe_layers_data.db.leveldb_backend import LevelDBDatabase
from caffe_layers_data.db.lmdb_backend import LMDBDatabase


def test_both_backends_come_from_the_plugin_hook():
    backends = db_backends()
    assert backends["lmdb"] is LMDBDatabase and backends["leveldb"] is LevelDBDatabase


@pytest.mark.parametrize("backend", ["lmdb", "leveldb"])
def test_cursor_reads_in_key_order_and_restarts(tmp_path, backend):
    with open_db(backend, tmp_path / "db", "new") as db:
        txn = db.new_transaction()
        for key in (b"b", b"c", b"a"):
            txn.put(key, key.upper())
        txn.commit()
    with open_db(backend, tmp_path / "db", "read") as db:
        cursor = db.new_cursor()
        seen = []
        while cursor.valid():
            seen.append((cursor.key(), cursor.value()))
            cursor.next()
        cursor.seek_to_first()
        assert seen == [(b"a", b"A"), (b"b", b"B"), (b"c", b"C")] and cursor.key() == b"a"


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


def test_new_refuses_an_existing_path_and_read_a_missing_one(tmp_path):
    (tmp_path / "there").mkdir()
    with pytest.raises(CaffeError, match="already exists"):
        open_db("lmdb", tmp_path / "there", "new")
    with pytest.raises(CaffeError, match="leveldb database '.*missing' not found"):
        open_db("leveldb", tmp_path / "missing", "read")


def test_unknown_backend_suggests_a_known_one(tmp_path):
    with pytest.raises(CaffeError, match="Unknown database backend 'lmbd'.*did you mean 'lmdb'"):
        open_db("lmbd", tmp_path / "db", "read")
