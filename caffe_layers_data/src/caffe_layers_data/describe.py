"""How error messages name data: shapes as CxHxW and database records by key."""

from __future__ import annotations

from collections.abc import Sequence


def shape_text(shape: Sequence[int]) -> str:
    """A shape written as Caffe's logs do, e.g. `3x32x32`."""
    return "x".join(str(int(d)) for d in shape)


def database_name(backend: str, path: str) -> str:
    """A database as errors name it, e.g. `lmdb database 'train_lmdb'`."""
    return f"{backend} database '{path}'"


def record_name(key: bytes, database: str) -> str:
    """A record as errors name it: its key (undecodable bytes replaced) and its database."""
    return f"record '{key.decode(errors='replace')}' of {database}"
