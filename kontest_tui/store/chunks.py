"""A session read in chunks of relations, for runs that never hold a whole session (run.session).

`store.chunks` (`Chunks`) reads the `relations`, `conversations` and `responses` of a session
by row key ranges.

A chunk is a run of consecutive relations (by row key) with all their conversations (in
order) and the responses stored for them. Reading by row key ranges uses the primary key and
the relation_key / conversation_key indexes, so each chunk costs its own size, never the
session's (`+session` keeps SQLite off the session-wide unique indexes).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kontest_tui.domain.records import AnswerKey, Conversation, Relation, Response

from .records import (
    CONVERSATION_READ,
    RELATION_READ,
    conversation_from_columns,
    relation_from_columns,
    row_to_response,
)
from .repository import Repository


@dataclass(slots=True)
class SessionChunk:
    """Relations (and their row keys), their conversations (and row keys), stored responses."""

    relations: list[Relation]
    relation_keys: dict[str, int]
    conversations: list[Conversation] = field(default_factory=list)
    conversation_keys: dict[str, int] = field(default_factory=dict)
    responses: dict[AnswerKey, Response] = field(default_factory=dict)


def _rows(cursor: sqlite3.Cursor) -> list[sqlite3.Row]:
    """The cursor's rows, each read by column name (sqlite3.Row: no dict built per row)."""
    cursor.row_factory = sqlite3.Row
    return cursor.fetchall()


def streamable(conn: sqlite3.Connection, session_id: str) -> bool:
    """True when the session can be asked and evaluated chunk by chunk: KONTEST
    conversations only, each pointing at a stored relation, stored in their relations' order
    (row keys follow positions, and a conversation never points at an earlier relation than
    the conversation before it)."""
    odd = conn.execute(
        "SELECT COUNT(*) FROM conversations WHERE session = ?"
        " AND (test_kind != 'kontest' OR relation_key IS NULL)",
        (session_id,),
    ).fetchone()[0]
    if odd:
        return False
    unordered = conn.execute(
        "SELECT COUNT(*) FROM (SELECT position, relation_key,"
        " LAG(position) OVER w AS before, LAG(relation_key) OVER w AS key_before"
        " FROM conversations WHERE session = ? WINDOW w AS (ORDER BY pk))"
        " WHERE position <= before OR relation_key < key_before",
        (session_id,),
    ).fetchone()[0]
    if unordered:
        return False
    relations = conn.execute(
        "SELECT COUNT(*) FROM (SELECT position, LAG(position) OVER (ORDER BY pk) AS before"
        " FROM relations WHERE session = ?) WHERE position <= before",
        (session_id,),
    ).fetchone()[0]
    return not relations


def iter_chunks(
    conn: sqlite3.Connection,
    session_id: str,
    size: int,
    *,
    conversations: bool = True,
    responses: bool = True,
) -> Iterator[SessionChunk]:
    """The session's relations `size` at a time, in order, with their conversations and
    stored responses (each only when asked for)."""
    after = -1
    while True:
        # Relations and conversations as plain tuples, the row key last (records'
        # *_from_columns take the others in order): no sqlite3.Row, no lookups by name.
        rows = conn.execute(
            f"SELECT {RELATION_READ}, pk FROM relations WHERE +session = ? AND pk > ?"
            " ORDER BY pk LIMIT ?",
            (session_id, after, size),
        ).fetchall()
        if not rows:
            return
        first, after = rows[0][-1], rows[-1][-1]
        chunk = SessionChunk(
            [relation_from_columns(*row[:-1]) for row in rows], {row[0]: row[-1] for row in rows}
        )
        if conversations:
            strings: dict[str, str] = {}
            found = conn.execute(
                f"SELECT {CONVERSATION_READ}, pk FROM conversations"
                " WHERE relation_key BETWEEN ? AND ? AND +session = ? ORDER BY pk",
                (first, after, session_id),
            ).fetchall()
            chunk.conversations = [
                conversation_from_columns(*row[:-1], strings=strings) for row in found
            ]
            chunk.conversation_keys = {row[0]: row[-1] for row in found}
            if responses and found:
                chunk.responses = {
                    (row["conversation"], row["turn"]): row_to_response(row)
                    for row in _rows(
                        conn.execute(
                            "SELECT * FROM responses WHERE conversation_key BETWEEN ? AND ?"
                            " AND +session = ? ORDER BY conversation_key, turn",
                            (found[0][-1], found[-1][-1], session_id),
                        )
                    )
                }
        yield chunk


def conversation_ids(conn: sqlite3.Connection, keys: Sequence[int]) -> Mapping[int, str]:
    """Conversation row key -> conversation id."""
    found: dict[int, str] = {}
    for start in range(0, len(keys), 500):
        part = keys[start : start + 500]
        found.update(
            conn.execute(
                f"SELECT pk, id FROM conversations WHERE pk IN ({','.join('?' * len(part))})",
                tuple(part),
            )
        )
    return found


class Chunks(Repository):
    """A session's relations, conversations and responses, a chunk of relations at a time."""

    def streamable(self, session_id: str) -> bool:
        """Can the session be asked and evaluated in chunks of relations (`streamable`)?"""
        return streamable(self.conn, session_id)

    def read(
        self, session_id: str, size: int, *, conversations: bool = True, responses: bool = True
    ) -> Iterator[SessionChunk]:
        """The session `size` relations at a time (`iter_chunks`)."""
        with self._damaged_rows("conversations", session_id):
            yield from iter_chunks(
                self.conn, session_id, size, conversations=conversations, responses=responses
            )

    def conversation_ids(self, keys: Sequence[int]) -> Mapping[int, str]:
        """Conversation row key -> id."""
        return conversation_ids(self.conn, keys)
