"""Key-value databases for Data layers and tools, with backends found through the `caffe_db_backends` hook."""

from __future__ import annotations

import difflib
import os

from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.db.base import Cursor, Database, Transaction
from caffe_layers_data.describe import database_name

__all__ = ["Cursor", "Database", "Transaction", "backend_name", "db_backends", "open_db"]


def db_backends() -> dict[str, type[Database]]:
    """Every installed database backend by name."""
    from caffe_core.plugins import collect

    return collect("caffe_db_backends")


def backend_name(backend: int | str) -> str:
    """The hook name of a DataParameter.DB value or a command-line backend string."""
    if isinstance(backend, str):
        return backend.lower()
    return caffe_pb2.DataParameter.DB.Name(backend).lower()


def open_db(backend: int | str, path: str | os.PathLike, mode: str) -> Database:
    """Opens a database for "read", "write" (must not exist) or "new"; errors name the path and backend."""
    name = backend_name(backend)
    backends = db_backends()
    if name not in backends:
        close = difflib.get_close_matches(name, list(backends), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise CaffeError(f"Unknown database backend '{name}' (known: {', '.join(sorted(backends))}){hint}")
    path = os.fspath(path)
    if mode == "read" and not os.path.isdir(path):
        raise CaffeError(f"{database_name(name, path)} not found (expected a directory)")
    if mode == "new" and os.path.exists(path):
        raise CaffeError(f"{database_name(name, path)} already exists")
    return backends[name](path, mode)
