"""LevelDB backend (plyvel)."""

from __future__ import annotations

from collections.abc import Iterator

import plyvel

from caffe_core.errors import CaffeError
from caffe_layers_data.db.base import Cursor, Database, Transaction


class LevelDBCursor(Cursor):
    """A cursor over a plyvel iterator on a snapshot."""

    def __init__(self, db: plyvel.DB) -> None:
        self._snapshot = db.snapshot()
        self._iterator: Iterator[tuple[bytes, bytes]] = iter(())
        self._current: tuple[bytes, bytes] | None = None
        self.seek_to_first()

    def seek_to_first(self) -> None:
        """Moves to the first record."""
        self._iterator = self._snapshot.iterator()
        self.next()

    def next(self) -> None:
        """Moves to the next record."""
        self._current = next(self._iterator, None)

    def key(self) -> bytes:
        """The current record's key."""
        assert self._current is not None, "the cursor is past the last record"
        return self._current[0]

    def value(self) -> bytes:
        """The current record's value."""
        assert self._current is not None, "the cursor is past the last record"
        return self._current[1]

    def valid(self) -> bool:
        """Whether the cursor is on a record."""
        return self._current is not None


class LevelDBTransaction(Transaction):
    """A plyvel write batch."""

    def __init__(self, db: plyvel.DB) -> None:
        self._db = db
        self._batch = db.write_batch()

    def put(self, key: bytes, value: bytes) -> None:
        """Adds a record to the pending batch."""
        self._batch.put(key, value)

    def commit(self) -> None:
        """Writes every pending record."""
        self._batch.write()
        self._batch = self._db.write_batch()


class LevelDBDatabase(Database):
    """A LevelDB directory; opening it for reading still writes its LOG and MANIFEST, as in Caffe."""

    def __init__(self, path: str, mode: str) -> None:
        super().__init__(path, mode)
        try:
            self._db = plyvel.DB(path, create_if_missing=mode != "read", error_if_exists=mode == "new",
                                 write_buffer_size=268435456, max_open_files=100)
        except (plyvel.Error, OSError) as err:
            raise CaffeError(f"cannot open leveldb database '{path}': {err}") from None

    def new_cursor(self) -> Cursor:
        """A cursor positioned on the first record."""
        return LevelDBCursor(self._db)

    def new_transaction(self) -> Transaction:
        """A write batch."""
        return LevelDBTransaction(self._db)

    def close(self) -> None:
        """Closes the database."""
        self._db.close()
