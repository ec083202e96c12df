"""The response cache: a model's raw answer to one prompt, kept across sessions (`response_cache`).

A run asks the cache before the model (run.writer) and stores new entries with the batch of
responses they answered (`store.responses.save_batch`), in one transaction. Model specs are
stored redacted (no URL credentials, no API key), text as valid UTF-8.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from .repository import Repository
from .schema import now_iso
from .text import redact_spec, storable_text

_CACHE_INSERT = (
    "INSERT OR REPLACE INTO response_cache (key, model, raw, tokens, created)"
    " VALUES (?, ?, ?, ?, ?)"
)

CacheEntry = tuple[str, str, str, int]  # key, model spec, raw text, tokens


def cache_rows(entries: Sequence[CacheEntry]) -> list[tuple[str, str, str, int, str]]:
    """The rows of `put_rows` for these entries (specs redacted once per model, one stamp)."""
    stamp = now_iso()
    specs = {model: redact_spec(model) for model in {entry[1] for entry in entries}}
    return [
        (key, specs[model], storable_text(raw), tokens, stamp)
        for key, model, raw, tokens in entries
    ]


def put_rows(conn: sqlite3.Connection, rows: Sequence[tuple[str, str, str, int, str]]) -> None:
    """Store cache rows (`cache_rows`) inside the caller's transaction."""
    conn.executemany(_CACHE_INSERT, rows)


class ResponseCache(Repository):
    """Cached raw answers by key (`response_cache`)."""

    def get(self, key: str) -> tuple[str, int] | None:
        """(raw text, tokens) cached for `key`, or None."""
        row = self.conn.execute(
            "SELECT raw, tokens FROM response_cache WHERE key = ?", (key,)
        ).fetchone()
        return (row[0], row[1]) if row is not None else None

    def put(self, key: str, model: str, raw: str, tokens: int) -> None:
        """Cache one answer (committed at once)."""
        put_rows(self.conn, cache_rows([(key, model, raw, tokens)]))
