"""Sessions: one row each (`sessions`), their KG stored once per distinct graph (`kg_snapshots`).

A session row holds what was asked (the KG snapshot's key, the template set, the model spec,
the options and test kinds) and how its run went (status, counts, times, the headline rate of
its last report). `store.sessions` (`Sessions`) creates a session with its relations and
conversations (store.relations) in one transaction, lists, reads, updates and deletes them,
and ends a run (`finish_run`: counts, verdicts, report, status and lease in one transaction).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Unpack, cast

from kontest_tui.domain.answers import clean_text
from kontest_tui.domain.records import Conversation, Relation, Verdict
from kontest_tui.errors import KontestError, LeaseLostError, StoreError

from . import leases
from .records import (
    JsonObject,
    NewSession,
    SessionListing,
    SessionRow,
    SessionUpdate,
    SnapshotText,
    dump_json,
    template_set_from_dict,
)
from .relations import insert_conversations, insert_relations
from .repository import Repository
from .responses import count_responses
from .schema import now_iso
from .text import redact_spec
from .verdicts import replace_evaluation
from .view_records import SessionHeader, SessionSummary

if TYPE_CHECKING:
    from .leases import Lease

STATUSES = ("created", "running", "paused", "cancelled", "done", "failed")
UNFINISHED = ("created", "running", "paused", "cancelled", "failed")

_FAILED_ROWS = (
    "(SELECT COUNT(*) FROM responses r INDEXED BY idx_responses_failed"
    " WHERE r.session = s.id AND r.error IS NOT NULL)"
)
_STOPPED_ROWS = (
    "(SELECT COUNT(*) FROM responses r INDEXED BY idx_responses_stopped"
    " WHERE r.session = s.id AND r.stopped = '{}' AND r.error IS NULL)"
)
_SESSION_LIST = (
    "SELECT id, created, updated, status, kg_name, model, seed, relations, conversations,"
    " planned,"
    " CASE WHEN status = 'done' THEN answered ELSE"
    " (SELECT COUNT(*) FROM responses r WHERE r.session = s.id) - " + _FAILED_ROWS + " END"
    " AS answered,"
    " CASE WHEN status = 'done' THEN failed ELSE " + _FAILED_ROWS + " END AS failed,"
    " retries, started, finished, elapsed_s, message, oracle_error_rate, oracle_errors,"
    " headline_measure, headline_rate, fresh_conversations, "
    + _STOPPED_ROWS.format("length")
    + " AS stopped_length, "
    + _STOPPED_ROWS.format("timeout")
    + " AS stopped_timeout FROM sessions s ORDER BY created, rowid"
)
_SESSION_COLUMNS = ", ".join(f"s.{column}" for column in SessionRow.__annotations__)
_JSON_OBJECTS = ("templates_json", "options_json", "kinds_json")


def new_session_id() -> str:
    """A sortable, readable id: UTC time plus 6 random hex digits."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def _store_kg_snapshot(conn: sqlite3.Connection, snapshot: SnapshotText) -> int:
    """The id of the KG snapshot with this JSON text, stored once per distinct graph."""
    kg_text = snapshot.text
    digest = hashlib.sha256(kg_text.encode("utf-8", "surrogatepass")).hexdigest()
    found = conn.execute("SELECT id FROM kg_snapshots WHERE sha256 = ?", (digest,)).fetchone()
    if found is not None:
        return int(found[0])
    cursor = conn.execute(
        "INSERT INTO kg_snapshots (sha256, name, nodes, edges, json) VALUES (?, ?, ?, ?, ?)",
        (digest, snapshot.name, snapshot.nodes, snapshot.edges, kg_text),
    )
    return int(cursor.lastrowid or 0)


_ORIGIN_CHARS = 16_384  # how much of a KG snapshot's JSON holds its name and source
_BLANK = re.compile(r"[ \t\n\r]*")  # JSON's whitespace


def _skip_blank(text: str, at: int) -> int:
    found = _BLANK.match(text, at)
    return found.end() if found else at


def _array_items(text: str, key: str) -> Iterator[object]:
    """The items of the array under `key` of the JSON object `text`, decoded one at a time
    (the other members are decoded and dropped; nothing when there is no such array), so a
    large snapshot's array is never held whole. ValueError when the text is not such JSON."""
    decoder = json.JSONDecoder()
    at = _skip_blank(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("a KG snapshot is a JSON object")
    at = _skip_blank(text, at + 1)
    closing = "}"
    while text[at : at + 1] != closing:
        name, at = decoder.raw_decode(text, at)
        at = _skip_blank(text, at)
        if text[at : at + 1] != ":":
            raise ValueError(f"':' expected at {at}")
        at = _skip_blank(text, at + 1)
        if name == key and text[at : at + 1] == "[":
            at, closing = _skip_blank(text, at + 1), "]"
            while text[at : at + 1] != closing:
                item, at = decoder.raw_decode(text, at)
                yield item
                at = _next_member(text, at, closing)
            return
        _value, at = decoder.raw_decode(text, at)
        at = _next_member(text, at, closing)


def _next_member(text: str, at: int, closing: str) -> int:
    """Where the next member (or `closing`) starts after a comma, or `closing` itself."""
    at = _skip_blank(text, at)
    if text[at : at + 1] == ",":
        return _skip_blank(text, at + 1)
    if text[at : at + 1] != closing:
        raise ValueError(f"',' or {closing!r} expected at {at}")
    return at


def _leading_string(head: str, key: str) -> str:
    """The string value of `key` in the start of a JSON object's text, or "" when that start
    does not hold it whole (or holds another value)."""
    marker = json.dumps(key) + ":"
    found = head.find(marker)
    if found < 0:
        return ""
    try:
        value, _end = json.JSONDecoder().raw_decode(head[found + len(marker) :].lstrip())
    except ValueError:
        return ""
    return value if isinstance(value, str) else ""


def _set_columns(conn: sqlite3.Connection, session_id: str, fields: Mapping[str, object]) -> None:
    """UPDATE the session row's `fields` (column -> value)."""
    assignments = ", ".join(f"{name} = ?" for name in fields)
    conn.execute(f"UPDATE sessions SET {assignments} WHERE id = ?", (*fields.values(), session_id))


def _kinds(text: str | None) -> tuple[str, ...]:
    if not text:
        return ("kontest",)
    try:
        data = json.loads(text)
    except ValueError:
        return ("kontest",)
    kinds = data.get("kinds") if isinstance(data, dict) else None
    return tuple(str(kind) for kind in kinds) if isinstance(kinds, list) and kinds else ("kontest",)


class Sessions(Repository):
    """The session rows and their KG snapshots."""

    # -- creating --------------------------------------------------------------------------

    def create(
        self,
        new: NewSession,
        relations: Sequence[Relation] = (),
        conversations: Sequence[Conversation] = (),
        *,
        chunks: Iterable[tuple[Sequence[Relation], Sequence[Conversation]]] | None = None,
        keep_up_to: int = 0,
    ) -> str:
        """Store a new session with its relations and conversations in one transaction; its id.

        `chunks` (instead of `relations` and `conversations`): pieces of both, each piece's
        conversations pointing at its own relations, stored as they come (a large session
        never all in memory). A session of at most `keep_up_to` relations keeps its records
        in this Store, so a run in the same process does not read them back
        (store.relations.Relations.keep)."""
        session_id = new.session_id or new_session_id()
        stamp = now_iso()
        if chunks is None:
            chunks = [(relations, conversations)]
        self.store.relations.forget()
        kept: tuple[list[Relation], list[Conversation]] | None = ([], [])
        row: dict[str, object] = {
            "id": session_id,
            "created": stamp,
            "updated": stamp,
            "status": "created",
            "kg_name": new.kg_name,
            "templates_json": dump_json(new.templates_json),
            "template_ids": dump_json(list(new.template_ids)),
            "model": redact_spec(new.model),
            "options_json": dump_json(dict(new.options)),
            "seed": new.seed,
            "depth": new.depth,
            "per_path": int(new.per_path),
            "relations": 0,
            "conversations": 0,
            "planned": 0,
            "kinds_json": dump_json(dict(new.kinds)) if new.kinds is not None else None,
            "fresh_conversations": int(new.fresh_conversations),
            "parent": new.parent,
        }
        try:
            with self.store.transaction() as conn:
                snapshot = new.kg_json
                if not isinstance(snapshot, SnapshotText):
                    snapshot = SnapshotText.of(snapshot)
                row["kg_snapshot"] = _store_kg_snapshot(conn, snapshot)
                conn.execute(
                    f"INSERT INTO sessions ({', '.join(row)})"
                    f" VALUES ({', '.join('?' for _ in row)})",
                    tuple(row.values()),
                )
                counts = [0, 0, 0]  # relations, conversations, planned turns
                for part_relations, part_conversations in chunks:
                    keys = insert_relations(conn, session_id, counts[0], part_relations, new.labels)
                    insert_conversations(conn, session_id, counts[1], part_conversations, keys=keys)
                    counts[0] += len(part_relations)
                    counts[1] += len(part_conversations)
                    if kept is not None and counts[0] <= keep_up_to:
                        kept[0].extend(part_relations)
                        kept[1].extend(part_conversations)
                    else:
                        kept = None
                    counts[2] += sum(len(conversation.turns) for conversation in part_conversations)
                conn.execute(
                    "UPDATE sessions SET relations = ?, conversations = ?, planned = ?"
                    " WHERE id = ?",
                    (*counts, session_id),
                )
        except StoreError as error:
            raise StoreError(f"cannot store session {session_id}: {error}") from None
        except (sqlite3.Error, OverflowError, UnicodeEncodeError) as error:
            # A number or text SQLite cannot hold (or an error outside the transaction):
            # one line, and nothing half-stored.
            raise StoreError(
                f"cannot store session {session_id} in {self.store.path}: {error}"
            ) from None
        if kept is not None:
            self.store.relations.keep(session_id, *kept)
        return session_id

    # -- reading ---------------------------------------------------------------------------

    def listing(self) -> Iterator[SessionListing]:
        """Every session, oldest first, without the large snapshot columns.

        `answered` and `failed` of a session that is not done (running, paused, cancelled,
        crashed) are counted from its stored rows, so they are true during a run and after
        a kill; a done session's were counted when it finished, in the transaction that
        closed it. `stopped_length` and `stopped_timeout` count the answers the token limit
        and the timeout cut (a failed turn the timeout cut before it could be read is no
        answer). Every count reads an index (the failed and stopped rows have partial ones,
        and are few), never the answers themselves."""
        return cast(Iterator[SessionListing], self._dicts(_SESSION_LIST))

    def ids(self) -> list[str]:
        """Every session id, oldest first."""
        return [row[0] for row in self._fetch("SELECT id FROM sessions ORDER BY created, rowid")]

    def get(self, session_id: str) -> SessionRow:
        """The session row (JSON columns decoded); StoreError listing the known ids otherwise."""
        rows = list(
            self._dicts(f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,))
        )
        if not rows:
            ids = self.ids()
            known = ", ".join(ids[-10:]) if ids else "none yet"
            more = f" (and {len(ids) - 10} older)" if len(ids) > 10 else ""
            raise StoreError(
                f"no session {session_id!r} in {self.store.path} (sessions: {known}{more})"
            )
        row = rows[0]
        with self._damaged_rows("sessions", session_id):
            for column in ("templates_json", "template_ids", "options_json"):
                row[column] = json.loads(row[column])
            kinds = row["kinds_json"]
            row["kinds_json"] = json.loads(kinds) if kinds else {"kinds": ["kontest"]}
            if not all(isinstance(row[column], dict) for column in _JSON_OBJECTS):
                raise ValueError("a snapshot column is not a JSON object")
        return cast(SessionRow, row)

    def kg_snapshot(self, session_id: str) -> JsonObject:
        """The KG the session was created from, as stored (kg.io.graph_from_dict reads it)."""
        rows = self._fetch(
            "SELECT k.json FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot"
            " WHERE s.id = ?",
            (session_id,),
        )
        if not rows:
            self.get(session_id)  # says which sessions there are
            raise StoreError(f"session {session_id} has no KG snapshot in {self.store.path}")
        with self._damaged_rows("kg_snapshots", session_id):
            data = json.loads(rows[0][0])
            if not isinstance(data, dict):
                raise ValueError("the KG snapshot is not a JSON object")
        return data

    def kg_origin(self, session_id: str) -> tuple[str, str]:
        """(name, source) of the session's KG snapshot, read from the start of its JSON (the
        graph's fields come before its nodes: kg.io.graph_to_dict), so the cost does not grow
        with the graph; empty strings where the snapshot has none."""
        rows = self._fetch(
            "SELECT k.name, substr(k.json, 1, ?) FROM sessions s"
            " JOIN kg_snapshots k ON k.id = s.kg_snapshot WHERE s.id = ?",
            (_ORIGIN_CHARS, session_id),
        )
        if not rows:
            return "", ""
        name, head = rows[0]
        return str(name or ""), _leading_string(str(head or ""), "source")

    # The nodes of a session's KG snapshot, read by SQLite's JSON functions (`?` the session).
    _NODES = (
        "SELECT json_extract(n.value, '$.id') AS id, json_extract(n.value, '$.label') AS label"
        " FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot,"
        " json_each(k.json, '$.nodes') n WHERE s.id = ?"
    )

    def node_labels(self, session_id: str) -> dict[str, str]:
        """Node id -> label of every node of the session's KG snapshot, without building the
        graph (whether a label is shared or generic: oracles.findings.label_doubts): its nodes
        decoded one at a time (SQLite's JSON functions, like json.loads, hold the whole parsed
        snapshot: ~250 MB at 1M relations)."""
        rows = self._fetch(
            "SELECT k.json FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot"
            " WHERE s.id = ?",
            (session_id,),
        )
        labels: dict[str, str] = {}
        with self._damaged_rows("kg_snapshots", session_id):
            for node in _array_items(str(rows[0][0]), "nodes") if rows else ():
                if isinstance(node, dict) and node.get("id") is not None:
                    labels[str(node["id"])] = str(node.get("label") or "")
        return labels

    def nodes_sharing_labels(self, session_id: str, nodes: Iterable[str]) -> dict[str, str]:
        """Node id -> label of `nodes` and of every other node of the session's KG whose label
        is one of theirs (without ASCII case, trimmed): whether a label is shared, read in
        SQLite without loading the graph."""
        wanted = sorted(set(nodes))
        if not wanted:
            return {}
        rows = self._fetch(
            f"WITH nodes AS ({self._NODES}) SELECT id, label FROM nodes"
            " WHERE lower(trim(label)) IN (SELECT lower(trim(label)) FROM nodes"
            f" WHERE id IN ({','.join('?' * len(wanted))}))",
            (session_id, *wanted),
        )
        return {str(node): str(label) for node, label in rows if node is not None}

    def latest(self, *, unfinished: bool = False) -> str | None:
        """The id of the newest session (only not-done ones when `unfinished`), or None."""
        sql = "SELECT id FROM sessions"
        params: tuple[str, ...] = ()
        if unfinished:
            sql += f" WHERE status IN ({', '.join('?' for _ in UNFINISHED)})"
            params = UNFINISHED
        rows = self._fetch(sql + " ORDER BY created DESC, rowid DESC LIMIT 1", params)
        return str(rows[0][0]) if rows else None

    def resolve(self, session_id: str | None, *, unfinished: bool = False) -> str:
        """`session_id` checked to exist, or the latest session; StoreError when none."""
        if session_id:
            self.get(session_id)
            return session_id
        latest = self.latest(unfinished=unfinished)
        if latest is None:
            what = "unfinished session" if unfinished else "session"
            raise StoreError(f"no {what} in {self.store.path}")
        return latest

    # -- the explorer's start and results screens -----------------------------------------

    def summaries(self, limit: int = 30) -> list[SessionSummary]:
        """The newest `limit` sessions, newest first, from stored columns only (the error
        rate is the one stored with the last report)."""
        rows = self._fetch(
            "SELECT id, model, kg_name, created, status, oracle_error_rate, kinds_json,"
            " relations, headline_measure, headline_rate FROM sessions"
            " ORDER BY created DESC, rowid DESC LIMIT ?",
            (limit,),
        )
        return [
            SessionSummary(
                id=str(row[0]),
                model=str(row[1] or ""),
                kg=str(row[2] or ""),
                date=str(row[3] or "")[:16].replace("T", " "),
                status=str(row[4] or ""),
                error_rate=float(row[5]) if isinstance(row[5], int | float) else None,
                kinds=_kinds(row[6]),
                relations=int(row[7] or 0),
                headline_measure=str(row[8] or ""),
                headline_rate=float(row[9]) if isinstance(row[9], int | float) else None,
            )
            for row in rows
        ]

    def kg_titles(self) -> dict[str, str]:
        """Each session's KG by the name its snapshot gives (session id -> name): the KG's
        own name, whatever path it was read from (the sessions' `kg_name` is that path)."""
        return {
            str(row[0]): str(row[1])
            for row in self._fetch(
                "SELECT s.id, k.name FROM sessions s JOIN kg_snapshots k ON k.id = s.kg_snapshot"
            )
        }

    def header(self, session_id: str) -> SessionHeader:
        """The session's model, KG names, templates, kinds and size (StoreError when unknown)."""
        rows = self._fetch(
            "SELECT s.id, s.model, s.kg_name, k.name, s.template_ids, s.kinds_json, s.relations,"
            " s.status, s.templates_json FROM sessions s JOIN kg_snapshots k"
            " ON k.id = s.kg_snapshot WHERE s.id = ?",
            (session_id,),
        )
        if not rows:
            raise StoreError(f"no session {session_id!r} in {self.store.path}")
        row = rows[0]
        try:
            template_ids = tuple(str(t) for t in json.loads(row[4]))
        except (ValueError, TypeError):
            template_ids = ()
        return SessionHeader(
            id=str(row[0]),
            model=str(row[1] or ""),
            kg_name=str(row[2] or ""),
            kg_title=str(row[3] or ""),
            template_ids=template_ids,
            kinds=_kinds(row[5]),
            relations=int(row[6] or 0),
            status=str(row[7] or ""),
            template_texts=_template_texts(row[8], session_id),
        )

    # -- changing --------------------------------------------------------------------------

    def update(self, session_id: str, **fields: Unpack[SessionUpdate]) -> None:
        """Set columns of a session row (and `updated`); status must be a known one."""
        status = fields.get("status")
        if status is not None and status not in STATUSES:
            raise StoreError(f"unknown session status {status!r}")
        try:
            _set_columns(self.conn, session_id, {**fields, "updated": now_iso()})
        except sqlite3.Error as error:
            raise StoreError(f"cannot update session {session_id}: {error}") from None

    def refresh_counts(self, session_id: str) -> dict[str, int]:
        """Recount the answered turns, failed turns (rows with an error: no answer) and
        retries from the responses and store them."""
        counts = count_responses(self.conn, session_id)
        try:
            _set_columns(self.conn, session_id, {**counts, "updated": now_iso()})
        except sqlite3.Error as error:
            raise StoreError(f"cannot update session {session_id}: {error}") from None
        return counts

    def delete(self, session_id: str) -> None:
        """Delete a session with everything stored about it (its KG snapshot too when no
        other session shares it)."""
        self.get(session_id)
        self.store.relations.forget()
        with self.store.transaction() as conn:
            conn.execute("DELETE FROM responses WHERE session = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            conn.execute(
                "DELETE FROM kg_snapshots WHERE id NOT IN (SELECT kg_snapshot FROM sessions)"
            )

    def finish_run(
        self,
        session_id: str,
        *,
        lease: Lease | None,
        status: str,
        message: str | None,
        elapsed_s: float,
        verdicts: Iterable[Verdict] | None = None,
        oracle_error_rate: float | None = None,
        oracle_errors: int | None = None,
        report: Mapping[str, object] | None = None,
        engine: str = "",
        keep_verdicts: bool = False,
    ) -> dict[str, int]:
        """End a run in one transaction: recount, store the verdicts and the report (when
        given; store.verdicts.replace_evaluation), set the status and give the lease back. A
        kill at any moment leaves either the running session as it was or the finished one,
        never a `done` session without verdicts. `keep_verdicts`: the verdicts are those
        stored during the run (store.verdicts.append, a streamed run); only the report is
        stored with them, and the explorer's views are built when first read (they hold the
        whole KG and a roll-up per node: ~450 MB and 40 s at 1M relations, which a run
        streamed to stay small should not spend)."""
        if status not in STATUSES:
            raise StoreError(f"unknown session status {status!r}")
        with self.store.transaction() as conn:
            if lease is not None and not leases.owns(conn, lease):
                # Another run took the session over: its status, counts and verdicts are
                # that run's to write, not this one's.
                raise LeaseLostError(leases.lost_message(conn, lease))
            counts = count_responses(conn, session_id)
            fields: dict[str, object] = {
                **counts,
                "status": status,
                "message": message,
                "elapsed_s": elapsed_s,
                "finished": now_iso() if status == "done" else None,
                "updated": now_iso(),
            }
            if verdicts is not None or keep_verdicts:
                replace_evaluation(
                    conn,
                    session_id,
                    None if keep_verdicts else verdicts or (),
                    report,
                    engine,
                    views=not keep_verdicts,
                )
                fields["oracle_error_rate"] = oracle_error_rate
                fields["oracle_errors"] = oracle_errors
            _set_columns(conn, session_id, fields)
            if lease is not None:
                leases.release(conn, lease)
        return counts


def _template_texts(stored: object, session_id: str) -> dict[str, str]:
    """Each template's text (one per relation type joined) from a session's templates_json
    ({} when it cannot be read)."""
    try:
        data = json.loads(str(stored))
        template_set = template_set_from_dict(data, f"session {session_id}")
    except (ValueError, TypeError, KontestError):
        return {}
    return {template.id: clean_text(template.text) for template in template_set.templates}
