"""Opening databases by backend name: key-ordered cursors and batched writes in both backends, errors."""

from __future__ import annotations

import pytest

from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.db import backend_name, open_db


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


def test_new_refuses_an_existing_path_and_read_a_missing_one(tmp_path):
    (tmp_path / "there").mkdir()
    with pytest.raises(CaffeError, match="already exists"):
        open_db("lmdb", tmp_path / "there", "new")
    with pytest.raises(CaffeError, match="leveldb database '.*missing' not found"):
        open_db("leveldb", tmp_path / "missing", "read")


def test_unknown_backend_suggests_a_known_one(tmp_path):
    with pytest.raises(CaffeError, match="Unknown database backend 'lmbd'.*did you mean 'lmdb'"):
        open_db("lmbd", tmp_path / "db", "read")


def test_backend_names_of_the_enum_and_of_command_lines():
    assert backend_name(caffe_pb2.DataParameter.LEVELDB) == "leveldb"
    assert backend_name(caffe_pb2.DataParameter.LMDB) == backend_name("LMDB") == "lmdb"


@pytest.mark.parametrize("backend", ["lmdb", "leveldb"])
def test_opened_database_keeps_its_path_and_mode(tmp_path, backend):
    with open_db(backend, tmp_path / "db", "new") as db:
        assert (db.path, db.mode) == (str(tmp_path / "db"), "new")


def test_leveldb_backend_in_new_mode_refuses_an_existing_database(tmp_path):
    # Caffe's LevelDB::Open(NEW) sets error_if_exists, so opening an existing database fails.
    from caffe_layers_data.db.leveldb_backend import LevelDBDatabase

    LevelDBDatabase(str(tmp_path / "db"), "new").close()
    with pytest.raises(CaffeError, match="cannot open leveldb database '.*db'"):
        LevelDBDatabase(str(tmp_path / "db"), "new")


def test_lmdb_backend_error_names_the_path(tmp_path):
    from caffe_layers_data.db.lmdb_backend import LMDBDatabase

    (tmp_path / "notadb").write_text("x")
    with pytest.raises(CaffeError, match="cannot open lmdb database '.*notadb'"):
        LMDBDatabase(str(tmp_path / "notadb"), "read")
