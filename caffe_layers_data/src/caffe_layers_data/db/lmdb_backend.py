"""LMDB backend (py-lmdb); readers open read-only without the lock file, as several nets may share one."""

from __future__ import annotations

import os

import lmdb

from caffe_core.errors import CaffeError
from caffe_layers_data.db.base import Cursor, Database, Transaction

INITIAL_MAP_SIZE = 1 << 26


class LMDBCursor(Cursor):
    """A cursor over one long-lived read transaction."""

    def __init__(self, env: lmdb.Environment) -> None:
        self._txn = env.begin(buffers=False)
        self._cursor = self._txn.cursor()
        self._valid = self._cursor.first()

    def seek_to_first(self) -> None:
        """Moves to the first record."""
        self._valid = self._cursor.first()

    def next(self) -> None:
        """Moves to the next record."""
        self._valid = self._cursor.next()

    def key(self) -> bytes:
        """The current record's key."""
        return self._cursor.key()

    def value(self) -> bytes:
        """The current record's value."""
        return self._cursor.value()

    def valid(self) -> bool:
        """Whether the cursor is on a record."""
        return self._valid


class LMDBTransaction(Transaction):
    """Buffers puts and writes them in one write transaction, growing the map when it is full (as Caffe)."""

    def __init__(self, env: lmdb.Environment) -> None:
        self._env = env
        self._pending: list[tuple[bytes, bytes]] = []

    def put(self, key: bytes, value: bytes) -> None:
        """Adds a record to the pending batch."""
        self._pending.append((key, value))

    def commit(self) -> None:
        """Writes every pending record, doubling the map size until they fit."""
        while True:
            try:
                with self._env.begin(write=True) as txn:
                    for key, value in self._pending:
                        txn.put(key, value)
                break
            except lmdb.MapFullError:
                self._env.set_mapsize(self._env.info()["map_size"] * 2)
        self._pending.clear()


class LMDBDatabase(Database):
    """An LMDB environment directory (data.mdb + lock.mdb)."""

    def __init__(self, path: str, mode: str) -> None:
        super().__init__(path, mode)
        try:
            if mode == "read":
                self._env = lmdb.open(path, readonly=True, lock=False, readahead=False)
            else:
                os.makedirs(path, exist_ok=mode == "write")
                self._env = lmdb.open(path, map_size=INITIAL_MAP_SIZE)
        except lmdb.Error as err:
            raise CaffeError(f"cannot open lmdb database '{path}': {err}") from None

    def new_cursor(self) -> Cursor:
        """A cursor positioned on the first record."""
        return LMDBCursor(self._env)

    def new_transaction(self) -> Transaction:
        """A write batch."""
        return LMDBTransaction(self._env)

    def close(self) -> None:
        """Closes the environment."""
        self._env.close()
