"""The pack's plugin: both database backends through the caffe_db_backends hook."""

from __future__ import annotations

from caffe_layers_data.db import db_backends
from caffe_layers_data.db.leveldb_backend import LevelDBDatabase
from caffe_layers_data.db.lmdb_backend import LMDBDatabase


def test_both_backends_come_from_the_plugin_hook():
    backends = db_backends()
    assert backends["lmdb"] is LMDBDatabase and backends["leveldb"] is LevelDBDatabase
