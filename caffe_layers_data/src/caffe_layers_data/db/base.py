"""The database interface of Caffe's db.hpp: a cursor for reading in key order and batched writes."""

from __future__ import annotations

from abc import ABC, abstractmethod


class Cursor(ABC):
    """Reads records in key order; after the last one `valid` is false until `seek_to_first`."""

    @abstractmethod
    def seek_to_first(self) -> None:
        """Moves to the first record."""

    @abstractmethod
    def next(self) -> None:
        """Moves to the next record."""

    @abstractmethod
    def key(self) -> bytes:
        """The current record's key."""

    @abstractmethod
    def value(self) -> bytes:
        """The current record's value."""

    @abstractmethod
    def valid(self) -> bool:
        """Whether the cursor is on a record."""


class Transaction(ABC):
    """Buffers puts until commit."""

    @abstractmethod
    def put(self, key: bytes, value: bytes) -> None:
        """Adds a record to the pending batch."""

    @abstractmethod
    def commit(self) -> None:
        """Writes every pending record."""


class Database(ABC):
    """An open database; `mode` is "read", "write" or "new"."""

    def __init__(self, path: str, mode: str) -> None:
        self.path = path
        self.mode = mode

    @abstractmethod
    def new_cursor(self) -> Cursor:
        """A cursor positioned on the first record."""

    @abstractmethod
    def new_transaction(self) -> Transaction:
        """A write batch."""

    @abstractmethod
    def close(self) -> None:
        """Releases the database."""

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
