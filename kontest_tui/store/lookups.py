"""Reading a few rows of a session by id: the relations, conversations and responses one
explanation card or one relation's detail shows, without loading the whole session.

Each function is one indexed query per chunk of ids (SQLite's variable limit is respected),
so a card costs the same in a 100-relation session as in a 100,000-relation one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kontest_tui.domain.records import AnswerKey, Conversation, Relation, Response, Verdict
from kontest_tui.errors import StoreError

from .records import row_to_conversation, row_to_relation, row_to_response, row_to_verdict

_CHUNK = 500  # ids per query (SQLite allows 999 variables in old builds)


def _rows(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> Iterator[dict[str, Any]]:
    try:
        cursor = conn.execute(sql, params)
    except sqlite3.Error as error:
        raise StoreError(f"session database: {error}") from None
    columns = [column[0] for column in cursor.description or ()]
    for row in cursor:
        yield dict(zip(columns, row, strict=True))


def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    unique = sorted(set(ids))
    for start in range(0, len(unique), _CHUNK):
        yield unique[start : start + _CHUNK]


def _damaged(table: str, session_id: str, error: Exception) -> StoreError:
    return StoreError(f"session {session_id} has a damaged row in {table}: {error}")


def _by_ids(
    conn: sqlite3.Connection,
    session_id: str,
    ids: Iterable[str],
    table: str,
    select: str,
) -> Iterator[dict[str, Any]]:
    """The rows `select` finds for these ids (its `{marks}` the ids' placeholders, its first
    parameter the session), a chunk of ids per query; a damaged row is one StoreError."""
    for chunk in _chunks(ids):
        sql = select.format(marks=",".join("?" * len(chunk)))
        yield from _rows(conn, sql, (session_id, *chunk))


def relations_by_id(
    conn: sqlite3.Connection, session_id: str, ids: Iterable[str]
) -> dict[str, Relation]:
    """The session's relations with these ids (ids it lacks are left out)."""
    select = "SELECT * FROM relations WHERE session = ? AND id IN ({marks})"
    try:
        return {
            row["id"]: row_to_relation(row)
            for row in _by_ids(conn, session_id, ids, "relations", select)
        }
    except (ValueError, TypeError, KeyError) as error:
        raise _damaged("relations", session_id, error) from None


def conversations_by_id(
    conn: sqlite3.Connection, session_id: str, ids: Iterable[str]
) -> dict[str, Conversation]:
    """The session's conversations with these ids (ids it lacks are left out)."""
    select = "SELECT * FROM conversations WHERE session = ? AND id IN ({marks})"
    try:
        return {
            row["id"]: row_to_conversation(row)
            for row in _by_ids(conn, session_id, ids, "conversations", select)
        }
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise _damaged("conversations", session_id, error) from None


def responses_of(
    conn: sqlite3.Connection, session_id: str, conversation_ids: Iterable[str]
) -> dict[AnswerKey, Response]:
    """Every stored response (all turns) of these conversations."""
    select = (
        "SELECT r.* FROM conversations c JOIN responses r ON r.conversation_key = c.pk"
        " WHERE c.session = ? AND c.id IN ({marks})"
    )
    try:
        return {
            (row["conversation"], row["turn"]): row_to_response(row)
            for row in _by_ids(conn, session_id, conversation_ids, "responses", select)
        }
    except (ValueError, TypeError, KeyError) as error:
        raise _damaged("responses", session_id, error) from None


def _errors_where(
    session_id: str, oracle: str | None, relation: str | None
) -> tuple[str, list[object]]:
    """The WHERE clause (and its parameters) of a session's error verdicts, filtered."""
    where = "session = ? AND error = 1"
    params: list[object] = [session_id]
    if oracle is not None:
        where += " AND oracle = ?"
        params.append(oracle)
    if relation is not None:
        where += _OF_RELATION
        params += [session_id, relation]
    return where, params


def error_verdicts(
    conn: sqlite3.Connection,
    session_id: str,
    *,
    oracle: str | None = None,
    relation: str | None = None,
    offset: int = 0,
    limit: int = 1,
) -> list[Verdict]:
    """Stored error verdicts in the order they were stored, filtered by oracle and relation."""
    where, params = _errors_where(session_id, oracle, relation)
    sql = f"SELECT * FROM verdicts WHERE {where} ORDER BY id LIMIT ? OFFSET ?"
    try:
        return [row_to_verdict(row) for row in _rows(conn, sql, [*params, limit, offset])]
    except (ValueError, TypeError, KeyError) as error:
        raise _damaged("verdicts", session_id, error) from None


def count_error_verdicts(
    conn: sqlite3.Connection,
    session_id: str,
    *,
    oracle: str | None = None,
    relation: str | None = None,
) -> int:
    """How many stored error verdicts `error_verdicts` would page through."""
    where, params = _errors_where(session_id, oracle, relation)
    return int(next(_rows(conn, f"SELECT COUNT(*) AS n FROM verdicts WHERE {where}", params))["n"])


def conversations_of_relation(
    conn: sqlite3.Connection, session_id: str, relation_id: str
) -> list[Conversation]:
    """Every conversation about one relation, in the session's order."""
    sql = (
        "SELECT c.* FROM relations r JOIN conversations c ON c.relation_key = r.pk"
        " WHERE r.session = ? AND r.id = ? ORDER BY c.position"
    )
    try:
        return [row_to_conversation(row) for row in _rows(conn, sql, (session_id, relation_id))]
    except (ValueError, TypeError, KeyError, IndexError) as error:
        raise _damaged("conversations", session_id, error) from None


# A verdict's relation through its key (verdicts are indexed by relation_key).
_OF_RELATION = " AND relation_key = (SELECT pk FROM relations WHERE session = ? AND id = ?)"
