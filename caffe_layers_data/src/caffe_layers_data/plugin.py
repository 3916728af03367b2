"""caffe-layers-data's hook implementations: the LMDB and LevelDB database backends."""

from __future__ import annotations

from caffe_core.hookspecs import hookimpl


@hookimpl
def caffe_db_backends() -> dict[str, type]:
    """The two backends Caffe's DataParameter.DB names."""
    from caffe_layers_data.db.leveldb_backend import LevelDBDatabase
    from caffe_layers_data.db.lmdb_backend import LMDBDatabase

    return {"lmdb": LMDBDatabase, "leveldb": LevelDBDatabase}
