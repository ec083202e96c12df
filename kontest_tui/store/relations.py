"""What a session asks: its relations and the conversations about them (`relations`, `conversations`).

Both are stored with the session (`store.sessions.create`, in its transaction) and in its
order (`position`); a conversation points at its relation's row (`relation_key`), which the
verdicts and the explorer's views read by. `store.relations` (`Relations`) reads them whole
(what an evaluation needs), a few by id (one explanation card, one probe), or a relation's
conversations, and appends conversations to a stored session (a template added after its
run). A chunk of them at a time is `store.chunks`.

Each read by id is one indexed query per chunk of 500 ids (SQLite's variable limit), so a
card costs the same in a 100-relation session as in a 100,000-relation one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kontest_tui.domain.extras import ConversationExtras, extras_from_json
from kontest_tui.domain.records import Conversation, Relation

from .records import (
    CONVERSATION_COLUMNS,
    RELATION_COLUMNS,
    conversation_values,
    dump_json,
    relation_values,
    row_to_conversation,
    row_to_relation,
)
from .repository import Repository
from .schema import now_iso

_CONVERSATION_INSERT = (
    f"INSERT INTO conversations ({', '.join(CONVERSATION_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in CONVERSATION_COLUMNS)})"
)
_RELATION_INSERT = (
    f"INSERT INTO relations ({', '.join(RELATION_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in RELATION_COLUMNS)})"
)
_CHUNK = 500  # ids per query (SQLite allows 999 variables in old builds)


def insert_relations(
    conn: sqlite3.Connection,
    session_id: str,
    start: int,
    relations: Iterable[Relation],
    labels: Mapping[str, str],
) -> dict[str, int]:
    """Store relations at positions `start`, `start + 1`, ... (inside the caller's
    transaction); relation id -> row key of those stored."""
    last = conn.execute("SELECT COALESCE(MAX(pk), 0) FROM relations").fetchone()[0]
    conn.executemany(
        _RELATION_INSERT,
        (
            relation_values(session_id, start + index, relation, labels)
            for index, relation in enumerate(relations)
        ),
    )
    return dict(
        conn.execute(
            "SELECT id, pk FROM relations WHERE +session = ? AND pk > ?", (session_id, last)
        )
    )


def insert_conversations(
    conn: sqlite3.Connection,
    session_id: str,
    start: int,
    conversations: Sequence[Conversation],
    *,
    keys: Mapping[str, int] | None = None,
) -> None:
    """Store conversations at positions `start`, `start + 1`, ..., each pointing at its
    relation's row (the session's relations are stored first; `keys`: relation id -> row
    key, when the caller has them), inside the caller's transaction."""
    if keys is None:
        keys = dict(conn.execute("SELECT id, pk FROM relations WHERE session = ?", (session_id,)))
    conn.executemany(
        _CONVERSATION_INSERT,
        (
            conversation_values(
                session_id, start + index, conversation, keys.get(conversation.relation_id)
            )
            for index, conversation in enumerate(conversations)
        ),
    )


def _chunks(ids: Iterable[str]) -> Iterator[list[str]]:
    unique = sorted(set(ids))
    for start in range(0, len(unique), _CHUNK):
        yield unique[start : start + _CHUNK]


@dataclass(frozen=True, slots=True)
class FirstAnswer:
    """A conversation of some test kind with the answer to its first turn (if any)."""

    conversation: str
    question: str
    answer: str | None  # the parsed answer (None: no answer)
    expected: str | None  # its first expected answer, when the kind knows it
    extras: ConversationExtras | None  # what its test kind records (domain.extras)


@dataclass(frozen=True, slots=True)
class RelationName:
    """A relation's id with its two ends' ids and labels (what naming it by labels searches)."""

    id: str
    parent: str
    child: str
    parent_label: str
    child_label: str


class Relations(Repository):
    """A session's relations and conversations."""

    # The records of the session the Store created last (sessions.create), each list given
    # once: (session id, relations, conversations).
    _kept: tuple[str, list[Relation] | None, list[Conversation] | None] | None = None

    def keep(
        self, session_id: str, relations: list[Relation], conversations: list[Conversation]
    ) -> None:
        """Hold the records of a session just created, so a run in the same process reads
        them once without reading them back (`load`, `load_conversations`)."""
        self._kept = (session_id, relations, conversations)

    def forget(self) -> None:
        """Drop the kept records (the session's rows are changing)."""
        self._kept = None

    def _still_stored(self, session_id: str, table: str, records: Sequence[object]) -> bool:
        """Whether kept `records` are still what `table` holds for the session (its count of
        rows is theirs: rows added since, by another process too, make them stale)."""
        stored = self.conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE session = ?", (session_id,)
        ).fetchone()[0]
        return bool(stored == len(records))

    # -- whole sessions ----------------------------------------------------------------------

    def load(self, session_id: str) -> list[Relation]:
        """The session's relations in its order."""
        if self._kept is not None and self._kept[0] == session_id:
            kept, self._kept = self._kept[1], (session_id, None, self._kept[2])
            if kept is not None and self._still_stored(session_id, "relations", kept):
                return kept
        return list(self.iterate(session_id))

    def iterate(self, session_id: str) -> Iterator[Relation]:
        """The session's relations in its order, read as they are iterated (a caller that
        needs the first few stops early)."""
        rows = self._dicts(
            "SELECT * FROM relations WHERE session = ? ORDER BY position", (session_id,)
        )
        with self._damaged_rows("relations", session_id):
            for row in rows:
                yield row_to_relation(row)

    def load_conversations(self, session_id: str) -> list[Conversation]:
        """The session's conversations in its order."""
        if self._kept is not None and self._kept[0] == session_id:
            kept, self._kept = self._kept[2], (session_id, self._kept[1], None)
            if kept is not None and self._still_stored(session_id, "conversations", kept):
                return kept
        with self._damaged_rows("conversations", session_id):
            strings: dict[str, str] = {}
            return [
                row_to_conversation(row, strings)
                for row in self._dicts(
                    "SELECT * FROM conversations WHERE session = ? ORDER BY position",
                    (session_id,),
                )
            ]

    def ids(self, session_id: str) -> list[str]:
        """The session's relation ids in its order."""
        return [
            str(row[0])
            for row in self._fetch(
                "SELECT id FROM relations WHERE session = ? ORDER BY position", (session_id,)
            )
        ]

    def names(self, session_id: str) -> list[RelationName]:
        """Every relation of the session by its ids and labels, in the session's order (five
        short columns, no path or type)."""
        return [
            RelationName(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]))
            for row in self._fetch(
                "SELECT id, parent, child, parent_label, child_label FROM relations"
                " WHERE session = ? ORDER BY position",
                (session_id,),
            )
        ]

    def node_labels(self, session_id: str, node_ids: Iterable[str]) -> dict[str, str]:
        """node id -> its label as stored with the session's relations, for the nodes among
        `node_ids` (those no relation names are left out)."""
        wanted = set(node_ids)
        found: dict[str, str] = {}
        if not wanted:
            return found
        for parent, parent_label, child, child_label in self._fetch(
            "SELECT parent, parent_label, child, child_label FROM relations WHERE session = ?",
            (session_id,),
        ):
            if parent in wanted:
                found[str(parent)] = str(parent_label)
            if child in wanted:
                found[str(child)] = str(child_label)
        return found

    # -- a few by id -------------------------------------------------------------------------

    def _by_ids(
        self, session_id: str, ids: Iterable[str], table: str, select: str
    ) -> Iterator[dict[str, Any]]:
        """The rows `select` finds for these ids (its `{marks}` the ids' placeholders, its
        first parameter the session), a chunk of ids per query."""
        for chunk in _chunks(ids):
            sql = select.format(marks=",".join("?" * len(chunk)))
            yield from self._dicts(sql, (session_id, *chunk))

    def by_id(self, session_id: str, ids: Iterable[str]) -> dict[str, Relation]:
        """The session's relations with these ids (ids it lacks are left out)."""
        select = "SELECT * FROM relations WHERE session = ? AND id IN ({marks})"
        with self._damaged_rows("relations", session_id):
            return {
                row["id"]: row_to_relation(row)
                for row in self._by_ids(session_id, ids, "relations", select)
            }

    def conversations_by_id(self, session_id: str, ids: Iterable[str]) -> dict[str, Conversation]:
        """The session's conversations with these ids (ids it lacks are left out)."""
        select = "SELECT * FROM conversations WHERE session = ? AND id IN ({marks})"
        with self._damaged_rows("conversations", session_id):
            return {
                row["id"]: row_to_conversation(row)
                for row in self._by_ids(session_id, ids, "conversations", select)
            }

    def conversations_of(self, session_id: str, relation_id: str) -> list[Conversation]:
        """Every conversation about one relation, in the session's order."""
        sql = (
            "SELECT c.* FROM relations r JOIN conversations c ON c.relation_key = r.pk"
            " WHERE r.session = ? AND r.id = ? ORDER BY c.position"
        )
        with self._damaged_rows("conversations", session_id):
            return [row_to_conversation(row) for row in self._dicts(sql, (session_id, relation_id))]

    def first_answers(self, session_id: str, test_kinds: Iterable[str]) -> list[FirstAnswer]:
        """The conversations of `test_kinds` with their first turn's question and answer."""
        kinds = list(test_kinds)
        found: list[FirstAnswer] = []
        rows = self._fetch(
            "SELECT c.id, c.test_kind, c.turns, c.expected, c.meta, r.answer, r.error"
            " FROM conversations c"
            " LEFT JOIN responses r ON r.conversation_key = c.pk AND r.turn = 0"
            f" WHERE c.session = ? AND c.test_kind IN ({', '.join('?' for _ in kinds)})"
            " ORDER BY c.position",
            (session_id, *kinds),
        )
        with self._damaged_rows("conversations", session_id):
            for cid, kind, turns, expected, meta, answer, error in rows:
                questions = json.loads(turns)
                if not questions:
                    continue
                expectations = json.loads(expected) if expected else []
                found.append(
                    FirstAnswer(
                        str(cid),
                        str(questions[0]["text"]),
                        str(answer) if answer is not None and error is None else None,
                        str(expectations[0]) if expectations and expectations[0] else None,
                        extras_from_json(str(kind), json.loads(meta)) if meta else None,
                    )
                )
        return found

    # -- more conversations ------------------------------------------------------------------

    def add_conversations(
        self,
        session_id: str,
        conversations: Sequence[Conversation],
        *,
        templates_json: Mapping[str, object],
        template_ids: Sequence[str],
    ) -> None:
        """Append conversations to a stored session (a template added after its run), with
        the session's new template set and ids, in one transaction. The session becomes
        unfinished ("created") so a resume asks the new turns; its answers so far are kept."""
        self.store.sessions.get(session_id)
        self.forget()
        added = sum(len(conversation.turns) for conversation in conversations)
        with self.store.transaction() as conn:
            start = conn.execute(
                "SELECT COALESCE(MAX(position) + 1, 0) FROM conversations WHERE session = ?",
                (session_id,),
            ).fetchone()[0]
            insert_conversations(conn, session_id, start, conversations)
            conn.execute(
                "UPDATE sessions SET conversations = conversations + ?, planned = planned + ?,"
                " templates_json = ?, template_ids = ?, status = 'created', updated = ?"
                " WHERE id = ?",
                (
                    len(conversations),
                    added,
                    dump_json(dict(templates_json)),
                    dump_json(list(template_ids)),
                    now_iso(),
                    session_id,
                ),
            )
