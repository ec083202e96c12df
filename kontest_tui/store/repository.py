"""What every repository of the store shares: the Store's one connection and its error wording.

A repository (`store.sessions`, `store.responses`, ...) is a small class over the tables of
one family, made by the `Store` over its connection; it never opens one of its own, so the
repositories of a Store read and write in the same transactions (`Store.transaction`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from kontest_tui.errors import StoreError

if TYPE_CHECKING:
    from .database import Store


class Repository:
    """A family of tables read and written over `store`'s connection."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def conn(self) -> sqlite3.Connection:
        return self.store.conn

    def _fetch(self, sql: str, params: Sequence[object] | Mapping[str, object] = ()) -> list[Any]:
        """The rows of one query (tuples; `params` by position or by name); a SQLite failure
        is one StoreError."""
        try:
            return self.conn.execute(sql, params).fetchall()
        except sqlite3.Error as error:
            raise StoreError(f"{self.store.path}: {error}") from None

    def _dicts(self, sql: str, params: Sequence[object] = ()) -> Iterator[dict[str, Any]]:
        """The rows of one query as dicts of their columns, read as they are iterated."""
        try:
            cursor = self.conn.execute(sql, params)
        except sqlite3.Error as error:
            raise StoreError(f"{self.store.path}: {error}") from None
        columns = [column[0] for column in cursor.description or ()]
        for row in cursor:
            yield dict(zip(columns, row, strict=True))

    @contextmanager
    def _damaged_rows(self, table: str, session_id: str) -> Iterator[None]:
        """Rows edited by hand (bad JSON, an unknown answer or kind) become one StoreError."""
        try:
            yield
        except (ValueError, TypeError, KeyError, IndexError, RecursionError) as error:
            raise StoreError(
                f"{self.store.path}: session {session_id} has a damaged row in {table} "
                f"({type(error).__name__}: {str(error)[:200]})"
            ) from None
