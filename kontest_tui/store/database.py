"""The session database: one SQLite file (WAL, foreign keys) read and written through `Store`.

Every response is one INSERT committed on its own, so a killed run loses at most the calls in
flight and never leaves half a row. Readers are generators of dicts (or records). A `Store`
holds one sqlite3 connection: open it in the thread that uses it (the TUI opens one per
worker thread). Failures raise `StoreError` with one line.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from kontest_tui import paths
from kontest_tui.domain.records import (
    Answer,
    AnswerKey,
    Conversation,
    Relation,
    Response,
    Verdict,
)
from kontest_tui.errors import LeaseLostError, StoreError

from . import chunks, leases, reports, rollups
from .leases import Lease
from .records import (
    CONVERSATION_COLUMNS,
    conversation_values,
    dump_json,
    relation_to_row,
    row_to_conversation,
    row_to_relation,
    row_to_response,
    row_to_verdict,
    verdict_values,
)
from .schema import SCHEMA_VERSION, apply_migrations, kg_summary, now_iso, read_version

if TYPE_CHECKING:
    import sqlite_utils

STATUSES = ("created", "running", "paused", "cancelled", "done", "failed")
UNFINISHED = ("created", "running", "paused", "cancelled", "failed")

# The conversation's single-column key is looked up by (session, id) in the same statement;
# an unknown conversation leaves it NULL, which NOT NULL refuses.
_RESPONSE_INSERT = (
    "INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer, error,"
    " latency_ms, tokens, attempts, created, cached, cut, stopped) VALUES"
    " ((SELECT pk FROM conversations WHERE session = ?1 AND id = ?2),"
    " ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
)
_CONVERSATION_INSERT = (
    f"INSERT INTO conversations ({', '.join(CONVERSATION_COLUMNS)})"
    f" VALUES ({', '.join('?' for _ in CONVERSATION_COLUMNS)})"
)
_VERDICT_INSERT = (
    "INSERT INTO verdicts (session, oracle, relation, relation_key, template, error, refs,"
    " answers, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_CACHE_INSERT = (
    "INSERT OR REPLACE INTO response_cache (key, model, raw, tokens, created)"
    " VALUES (?, ?, ?, ?, ?)"
)
_FAILED_ROWS = (
    "(SELECT COUNT(*) FROM responses r INDEXED BY idx_responses_failed"
    " WHERE r.session = s.id AND r.error IS NOT NULL)"
)
_STOPPED_ROWS = (
    "(SELECT COUNT(*) FROM responses r INDEXED BY idx_responses_stopped"
    " WHERE r.session = s.id AND r.stopped = '{}')"
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
# user:password@ in a URL (never stored).
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
SECRET_ENV_VARS = ("OPENAI_API_KEY",)
_SURROGATES = re.compile("[\ud800-\udfff]")


def redact_spec(spec: str) -> str:
    """A model spec safe to store: URL credentials and any secret env var value removed."""
    spec = _URL_CREDENTIALS.sub("", spec)
    for name in SECRET_ENV_VARS:
        value = os.environ.get(name)
        if value and len(value) >= 4:
            spec = spec.replace(value, "***")
    return spec


def storable_text(text: str) -> str:
    """`text` as valid UTF-8 (lone surrogates become U+FFFD); unchanged when already valid."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub("\ufffd", text)
    return text


def _response_values(session_id: str, response: Response, cached: bool, created: str) -> list[Any]:
    """The parameters of _RESPONSE_INSERT for one response."""
    return [
        session_id,
        response.conversation_id,
        response.turn,
        response.raw,
        response.answer.value,
        response.error,
        response.latency_ms,
        response.tokens,
        response.attempts,
        created,
        int(cached),
        response.cut,
        response.stopped,
    ]


def _storable_values(values: list[Any]) -> list[Any]:
    """Response parameters with text SQLite cannot hold made storable (raw and error)."""
    values = list(values)
    values[3] = storable_text(values[3])
    values[5] = storable_text(values[5]) if values[5] else values[5]
    return values


def _response_error(session_id: str, response: Response, error: sqlite3.Error) -> StoreError:
    reason = str(error)
    if "UNIQUE" in reason:
        reason = "this turn is stored already (another run of the session answered it)"
    elif "responses.conversation_key" in reason:
        reason = f"session {session_id} has no conversation {response.conversation_id!r}"
    return StoreError(
        f"cannot store the response to {response.conversation_id} turn {response.turn}: {reason}"
    )


def new_session_id() -> str:
    """A sortable, readable id: UTC time plus 6 random hex digits."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def _writable(path: Path) -> bool:
    """Whether SQLite can write `path` and its journal files (the file and its directory)."""
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


def _is_read_only_error(error: sqlite3.Error) -> bool:
    text = str(error).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that never writes (no WAL switch, no -shm created): `mode=ro`,
    or `immutable=1` when the directory does not allow the WAL index to be made."""
    uri = "file:" + quote(str(path.resolve()))
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, timeout=10.0)
    try:
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    return sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None, timeout=10.0)


def _switch_to_wal(conn: sqlite3.Connection, patience_s: float = 10.0) -> str:
    """`PRAGMA journal_mode = WAL`, tried again while another process holds the lock: the
    switch does not wait on the busy timeout, and processes opening a new DB together
    collide on it."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class Store:
    """The session database at `path` (default: paths.default_db_path()), migrated on open.

    A file (or directory) this process cannot write is opened read only: reports, lists and
    exports work, writes fail with a StoreError; an older schema is then migrated in a
    private in-memory copy, never in the file."""

    def __init__(self, path: str | Path | None = None, *, create: bool = True) -> None:
        self.path = Path(path) if path is not None else paths.default_db_path()
        if not create and not self.path.exists():
            raise StoreError(f"no session database at {self.path}")
        if self.path.is_dir():
            raise StoreError(f"{self.path} is a directory, not a session database")
        self.new_file = not self.path.exists()  # made by this Store: removed if left unused
        self.read_only = self.path.exists() and not _writable(self.path)
        try:
            if self.read_only:
                conn = _connect_read_only(self.path)
            else:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, isolation_level=None, timeout=10.0)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"cannot open session database {self.path}: {error}") from None
        self.conn = conn
        try:
            try:
                self._set_up()
            except sqlite3.OperationalError as error:
                if self.read_only or not self.path.exists() or not _is_read_only_error(error):
                    raise
                # A read-only mount (or a file we may not write, as root on a read-only
                # file system): read it as it is.
                self.conn.close()
                self.read_only = True
                self.conn = _connect_read_only(self.path)
                self._set_up()
        except sqlite3.DatabaseError as error:
            self.conn.close()
            raise StoreError(f"{self.path} is not a kontest session database ({error})") from None
        except StoreError:
            self.conn.close()
            raise
        # The session this Store created last, and its records as stored, until read once:
        # (id, {"relations": [...], "conversations": [...]}).
        self._created: tuple[str, dict[str, list[Any]]] | None = None

    def _set_up(self) -> None:
        conn = self.conn
        conn.execute("PRAGMA busy_timeout = 10000")
        version = read_version(conn)
        if version is None:
            raise StoreError(
                f"{self.path} is not a kontest session database (it holds other tables)"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this kontest "
                f"({SCHEMA_VERSION}); upgrade kontest-tui"
            )
        if self.read_only:
            if version < SCHEMA_VERSION:
                # Read the file as this kontest's schema without writing it: migrate a copy.
                memory = sqlite3.connect(":memory:", isolation_level=None)
                conn.backup(memory)
                conn.close()
                self.conn = conn = memory
                apply_migrations(conn)
            conn.execute("PRAGMA foreign_keys = ON")
            return
        mode = _switch_to_wal(conn)
        if str(mode).lower() != "wal":
            raise StoreError(f"cannot switch {self.path} to WAL mode (got {mode})")
        # NORMAL in WAL mode: a commit survives a killed process (not a power cut) and
        # costs no fsync, which keeps the per-response commit far below a millisecond.
        conn.execute("PRAGMA synchronous = NORMAL")
        if version < SCHEMA_VERSION:
            apply_migrations(conn)
        conn.execute("PRAGMA foreign_keys = ON")

    # -- plumbing -------------------------------------------------------------------------

    @functools.cached_property
    def db(self) -> sqlite_utils.Database:
        """The same connection as a sqlite-utils Database (imported on first use: it adds
        70 ms to the start of every command that opens a store)."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close_after(failed=kind is not None)

    def close_after(self, *, failed: bool) -> None:
        """Close; a file this Store made is removed again when the command failed before
        storing any session (a failed `kontest run` leaves no empty database behind)."""
        unused = False
        if failed and self.new_file and not self.read_only:
            try:
                unused = self.conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None
            except sqlite3.Error:
                unused = False
        self.close()
        if unused:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    Path(f"{self.path}{suffix}").unlink()

    @property
    def version(self) -> int:
        return read_version(self.conn) or 0

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: all or nothing. SQLite failures (locked, read only, disk
        full, corrupt) become one-line StoreErrors."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        except sqlite3.Error as error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StoreError(f"{self.path}: {error}") from None

    def _query(self, sql: str, params: Sequence[Any] = ()) -> Iterator[dict[str, Any]]:
        try:
            cursor = self.conn.execute(sql, params)
        except sqlite3.Error as error:
            raise StoreError(f"{self.path}: {error}") from None
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
                f"{self.path}: session {session_id} has a damaged row in {table} "
                f"({type(error).__name__}: {str(error)[:200]})"
            ) from None

    @staticmethod
    def _insert_rows(conn: sqlite3.Connection, table: str, rows: Iterable[dict[str, Any]]) -> None:
        rows = list(rows)
        if not rows:
            return
        columns = list(rows[0])
        sql = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        )
        conn.executemany(sql, [tuple(row[c] for c in columns) for row in rows])

    # -- sessions -------------------------------------------------------------------------

    def create_session(
        self,
        *,
        kg_name: str,
        kg_json: Mapping[str, Any],
        templates_json: Mapping[str, Any],
        template_ids: Sequence[str],
        model: str,
        options: Mapping[str, Any],
        relations: Sequence[Relation],
        conversations: Sequence[Conversation],
        labels: Mapping[str, str],
        seed: int = 0,
        depth: int | None = None,
        per_path: bool = False,
        session_id: str | None = None,
        kinds: Mapping[str, Any] | None = None,
        chunks: Iterable[tuple[Sequence[Relation], Sequence[Conversation]]] | None = None,
        keep_up_to: int = 0,
        fresh_conversations: bool = False,
    ) -> str:
        """Store a new session with its relations and conversations in one transaction.

        `kinds` ({"kinds": [...], "options": {...}, "problems": [...]}) records the test kinds
        asked besides KONTEST paraphrases; None means paraphrases only. `fresh_conversations`:
        every conversation is to be asked from scratch (no answer shared between them).
        `chunks` (instead of
        `relations` and `conversations`): pieces of both, each piece's conversations pointing
        at its own relations, stored as they come (a large session never all in memory).
        A session of at most `keep_up_to` relations keeps its records in this Store, so a run
        in the same process does not read them back (load_relations, load_conversations)."""
        session_id = session_id or new_session_id()
        stamp = now_iso()
        if chunks is None:
            chunks = [(relations, conversations)]
        self._created = None
        kept: tuple[list[Relation], list[Conversation]] | None = ([], [])
        kg_text = dump_json(kg_json)
        row = {
            "id": session_id,
            "created": stamp,
            "updated": stamp,
            "status": "created",
            "kg_name": kg_name,
            "templates_json": dump_json(templates_json),
            "template_ids": dump_json(list(template_ids)),
            "model": redact_spec(model),
            "options_json": dump_json(dict(options)),
            "seed": seed,
            "depth": depth,
            "per_path": int(per_path),
            "relations": 0,
            "conversations": 0,
            "planned": 0,
            "kinds_json": dump_json(dict(kinds)) if kinds is not None else None,
            "fresh_conversations": int(fresh_conversations),
        }
        try:
            with self.transaction() as conn:
                row["kg_snapshot"] = self._store_kg_snapshot(conn, kg_text)
                self._insert_rows(conn, "sessions", [row])
                counts = [0, 0, 0]  # relations, conversations, planned turns
                for part_relations, part_conversations in chunks:
                    last = conn.execute("SELECT COALESCE(MAX(pk), 0) FROM relations").fetchone()[0]
                    self._insert_rows(
                        conn,
                        "relations",
                        (
                            relation_to_row(session_id, counts[0] + index, relation, labels)
                            for index, relation in enumerate(part_relations)
                        ),
                    )
                    keys = dict(
                        conn.execute(
                            "SELECT id, pk FROM relations WHERE +session = ? AND pk > ?",
                            (session_id, last),
                        )
                    )
                    self._insert_conversations(
                        conn, session_id, counts[1], part_conversations, keys=keys
                    )
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
            raise StoreError(f"cannot store session {session_id} in {self.path}: {error}") from None
        if kept is not None:
            self._created = (session_id, {"relations": kept[0], "conversations": kept[1]})
        return session_id

    def _kept(self, session_id: str, table: str) -> list[Any] | None:
        """The records of `table` ("relations" or "conversations") this Store kept when it
        created `session_id`, given once (then read from the file: a long-lived Store does
        not hold them); None when none are kept, or when the stored rows changed since (their
        count differs: rows added, by another process too)."""
        created = self._created
        if created is None or created[0] != session_id:
            return None
        records = created[1].pop(table, None)
        if records is None:
            return None
        stored = self.conn.execute(
            f"SELECT COUNT(*) FROM {table} WHERE session = ?", (session_id,)
        ).fetchone()[0]
        return records if stored == len(records) else None

    @classmethod
    def _insert_conversations(
        cls,
        conn: sqlite3.Connection,
        session_id: str,
        start: int,
        conversations: Sequence[Conversation],
        *,
        keys: Mapping[str, int] | None = None,
    ) -> None:
        """Store conversations at positions `start`, `start + 1`, ..., each pointing at its
        relation's row (the session's relations are stored first; `keys`: relation id ->
        row key, when the caller has them)."""
        if keys is None:
            keys = dict(
                conn.execute("SELECT id, pk FROM relations WHERE session = ?", (session_id,))
            )
        conn.executemany(
            _CONVERSATION_INSERT,
            (
                conversation_values(
                    session_id, start + index, conversation, keys.get(conversation.relation_id)
                )
                for index, conversation in enumerate(conversations)
            ),
        )

    @staticmethod
    def _store_kg_snapshot(conn: sqlite3.Connection, kg_text: str) -> int:
        """The id of the KG snapshot with this JSON text, stored once per distinct graph."""
        digest = hashlib.sha256(kg_text.encode("utf-8", "surrogatepass")).hexdigest()
        found = conn.execute("SELECT id FROM kg_snapshots WHERE sha256 = ?", (digest,)).fetchone()
        if found is not None:
            return int(found[0])
        name, nodes, edges = kg_summary(kg_text)
        cursor = conn.execute(
            "INSERT INTO kg_snapshots (sha256, name, nodes, edges, json) VALUES (?, ?, ?, ?, ?)",
            (digest, name, nodes, edges, kg_text),
        )
        return int(cursor.lastrowid or 0)

    def iter_sessions(self) -> Iterator[dict[str, Any]]:
        """Every session, oldest first, without the large snapshot columns.

        `answered` and `failed` of a session that is not done (running, paused, cancelled,
        crashed) are counted from its stored rows, so they are true during a run and after
        a kill; a done session's were counted when it finished, in the transaction that
        closed it. `stopped_length` and `stopped_timeout` count the answers the token limit
        and the timeout cut. Every count reads an index (the failed and stopped rows have
        partial ones), never the answers themselves."""
        yield from self._query(_SESSION_LIST)

    def session_ids(self) -> list[str]:
        return [row["id"] for row in self._query("SELECT id FROM sessions ORDER BY created, rowid")]

    def get_session(self, session_id: str) -> dict[str, Any]:
        """The session row (snapshots decoded); StoreError listing the known ids otherwise."""
        rows = list(
            self._query(
                "SELECT s.*, k.json AS kg_json FROM sessions s"
                " JOIN kg_snapshots k ON k.id = s.kg_snapshot WHERE s.id = ?",
                (session_id,),
            )
        )
        if not rows:
            ids = self.session_ids()
            known = ", ".join(ids[-10:]) if ids else "none yet"
            more = f" (and {len(ids) - 10} older)" if len(ids) > 10 else ""
            raise StoreError(f"no session {session_id!r} in {self.path} (sessions: {known}{more})")
        row = rows[0]
        with self._damaged_rows("sessions", session_id):
            for column in ("kg_json", "templates_json", "template_ids", "options_json"):
                row[column] = json.loads(row[column])
            kinds = row.get("kinds_json")
            row["kinds_json"] = json.loads(kinds) if kinds else {"kinds": ["kontest"]}
            objects = ("kg_json", "templates_json", "options_json", "kinds_json")
            if not all(isinstance(row[column], dict) for column in objects):
                raise ValueError("a snapshot column is not a JSON object")
        return row

    def latest_session(self, *, unfinished: bool = False) -> str | None:
        """The id of the newest session (only not-done ones when `unfinished`), or None."""
        sql = "SELECT id FROM sessions"
        params: tuple[str, ...] = ()
        if unfinished:
            sql += f" WHERE status IN ({', '.join('?' for _ in UNFINISHED)})"
            params = UNFINISHED
        rows = list(self._query(sql + " ORDER BY created DESC, rowid DESC LIMIT 1", params))
        return rows[0]["id"] if rows else None

    def resolve_session(self, session_id: str | None, *, unfinished: bool = False) -> str:
        """`session_id` checked to exist, or the latest session; StoreError when none."""
        if session_id:
            self.get_session(session_id)
            return session_id
        latest = self.latest_session(unfinished=unfinished)
        if latest is None:
            what = "unfinished session" if unfinished else "session"
            raise StoreError(f"no {what} in {self.path}")
        return latest

    def update_session(self, session_id: str, **fields: Any) -> None:
        """Set columns of a session row (and `updated`); status must be a known one."""
        status = fields.get("status")
        if status is not None and status not in STATUSES:
            raise StoreError(f"unknown session status {status!r}")
        fields["updated"] = now_iso()
        assignments = ", ".join(f"{name} = ?" for name in fields)
        try:
            self.conn.execute(
                f"UPDATE sessions SET {assignments} WHERE id = ?", (*fields.values(), session_id)
            )
        except sqlite3.Error as error:
            raise StoreError(f"cannot update session {session_id}: {error}") from None

    def refresh_counts(self, session_id: str) -> dict[str, int]:
        """Recount the answered turns, failed turns (rows with an error: no answer) and
        retries from the responses and store them."""
        counts = self._count_responses(self.conn, session_id)
        self.update_session(session_id, **counts)
        return counts

    @staticmethod
    def _count_responses(conn: sqlite3.Connection, session_id: str) -> dict[str, int]:
        row = conn.execute(
            "SELECT COALESCE(SUM(error IS NULL), 0), COALESCE(SUM(error IS NOT NULL), 0),"
            " COALESCE(SUM(MAX(attempts - 1, 0)), 0) FROM responses WHERE session = ?",
            (session_id,),
        ).fetchone()
        return {"answered": row[0], "failed": row[1], "retries": row[2]}

    # -- run ownership and the end of a run -------------------------------------------------

    def acquire_lease(self, session_id: str) -> Lease:
        """Take the session's lease (SessionBusyError while another live run holds it)."""
        self.get_session(session_id)
        with self.transaction() as conn:
            return leases.acquire(conn, session_id)

    def renew_lease(self, lease: Lease) -> bool:
        """Keep the lease alive; False when another process took it over."""
        with self.transaction() as conn:
            return leases.renew(conn, lease)

    def lease_lost(self, lease: Lease) -> LeaseLostError:
        """The error of a run whose lease was taken over (saying by whom)."""
        return LeaseLostError(leases.lost_message(self.conn, lease))

    def session_leased(self, session_id: str) -> bool:
        """Whether a live run holds the session's lease (a stale one does not count)."""
        row = self.conn.execute(
            "SELECT host, pid, renewed FROM session_leases WHERE session = ?", (session_id,)
        ).fetchone()
        return row is not None and not leases.is_stale(row[0], row[1], row[2])

    def release_lease(self, lease: Lease) -> None:
        with self.transaction() as conn:
            leases.release(conn, lease)

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
        report: Mapping[str, Any] | None = None,
        engine: str = "",
        keep_verdicts: bool = False,
    ) -> dict[str, int]:
        """End a run in one transaction: recount, store the verdicts and the report (when
        given; store.reports), set the status and give the lease back. A kill at any moment
        leaves either the running session as it was or the finished one, never a `done`
        session without verdicts. `keep_verdicts`: the verdicts are those stored during the
        run (append_verdicts, a streamed run); only the report is stored with them."""
        if status not in STATUSES:
            raise StoreError(f"unknown session status {status!r}")
        with self.transaction() as conn:
            if lease is not None and not leases.owns(conn, lease):
                # Another run took the session over: its status, counts and verdicts are
                # that run's to write, not this one's.
                raise LeaseLostError(leases.lost_message(conn, lease))
            counts = self._count_responses(conn, session_id)
            fields: dict[str, Any] = {
                **counts,
                "status": status,
                "message": message,
                "elapsed_s": elapsed_s,
                "finished": now_iso() if status == "done" else None,
                "updated": now_iso(),
            }
            if verdicts is not None or keep_verdicts:
                self._replace_evaluation(
                    conn, session_id, None if keep_verdicts else verdicts or (), report, engine
                )
                fields["oracle_error_rate"] = oracle_error_rate
                fields["oracle_errors"] = oracle_errors
            assignments = ", ".join(f"{name} = ?" for name in fields)
            conn.execute(
                f"UPDATE sessions SET {assignments} WHERE id = ?", (*fields.values(), session_id)
            )
            if lease is not None:
                leases.release(conn, lease)
        return counts

    def delete_session(self, session_id: str) -> None:
        self.get_session(session_id)
        self._created = None
        with self.transaction() as conn:
            conn.execute("DELETE FROM responses WHERE session = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            conn.execute(
                "DELETE FROM kg_snapshots WHERE id NOT IN (SELECT kg_snapshot FROM sessions)"
            )

    # -- relations and conversations ------------------------------------------------------

    def iter_relations(self, session_id: str) -> Iterator[dict[str, Any]]:
        yield from self._query(
            "SELECT * FROM relations WHERE session = ? ORDER BY position", (session_id,)
        )

    def load_relations(self, session_id: str) -> list[Relation]:
        kept = self._kept(session_id, "relations")
        if kept is not None:
            return kept
        with self._damaged_rows("relations", session_id):
            return [row_to_relation(row) for row in self.iter_relations(session_id)]

    def iter_conversations(self, session_id: str) -> Iterator[dict[str, Any]]:
        yield from self._query(
            "SELECT * FROM conversations WHERE session = ? ORDER BY position", (session_id,)
        )

    def load_conversations(self, session_id: str) -> list[Conversation]:
        kept = self._kept(session_id, "conversations")
        if kept is not None:
            return kept
        with self._damaged_rows("conversations", session_id):
            strings: dict[str, str] = {}
            return [
                row_to_conversation(row, strings) for row in self.iter_conversations(session_id)
            ]

    def add_conversations(
        self,
        session_id: str,
        conversations: Sequence[Conversation],
        *,
        templates_json: Mapping[str, Any],
        template_ids: Sequence[str],
    ) -> None:
        """Append conversations to a stored session (a template added after its run), with the
        session's new template set and ids, in one transaction. The session becomes unfinished
        ("created") so a resume asks the new turns; its answers so far are kept."""
        self.get_session(session_id)
        self._created = None
        added = sum(len(conversation.turns) for conversation in conversations)
        try:
            with self.transaction() as conn:
                start = conn.execute(
                    "SELECT COALESCE(MAX(position) + 1, 0) FROM conversations WHERE session = ?",
                    (session_id,),
                ).fetchone()[0]
                self._insert_conversations(conn, session_id, start, conversations)
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
        except sqlite3.IntegrityError as error:
            raise StoreError(f"cannot add conversations to session {session_id}: {error}") from None

    # -- responses ------------------------------------------------------------------------

    def save_response(self, session_id: str, response: Response, *, cached: bool = False) -> None:
        """Insert one response and commit it (a duplicate (conversation, turn) is an error).

        Text SQLite cannot hold (lone surrogates from a lenient decoder) is stored with
        U+FFFD in their place; everything else is stored exactly as received."""
        values = _response_values(session_id, response, cached, now_iso())
        try:
            self._insert_response(self.conn, values)
        except sqlite3.Error as error:
            raise _response_error(session_id, response, error) from None

    @staticmethod
    def _insert_response(conn: sqlite3.Connection, values: list[Any]) -> None:
        try:
            conn.execute(_RESPONSE_INSERT, values)
        except UnicodeEncodeError:
            conn.execute(_RESPONSE_INSERT, _storable_values(values))

    def save_batch(
        self,
        session_id: str,
        responses: Sequence[tuple[Response, bool, str]],
        cache: Sequence[tuple[str, str, str, int]] = (),
    ) -> list[StoreError]:
        """Store responses ((response, cached, created) each) and cache entries ((key, model,
        raw, tokens) each) in one transaction: one commit for a whole batch.

        When a row cannot be stored (an unknown conversation, a duplicate turn), the batch is
        stored row by row instead, so every other answer is kept, and the rows that failed
        are returned as StoreErrors. A failure of the transaction itself (locked, read only,
        disk full) raises a StoreError and stores nothing."""
        rows = [_response_values(session_id, *entry) for entry in responses]
        stamp = now_iso()
        specs = {model: redact_spec(model) for model in {entry[1] for entry in cache}}
        cache_rows = [
            (key, specs[model], storable_text(raw), tokens, stamp)
            for key, model, raw, tokens in cache
        ]
        try:
            with self.transaction() as conn:
                try:
                    conn.executemany(_RESPONSE_INSERT, rows)
                except UnicodeEncodeError:
                    conn.executemany(_RESPONSE_INSERT, [_storable_values(row) for row in rows])
                conn.executemany(_CACHE_INSERT, cache_rows)
        except StoreError:
            if not rows:
                raise
        else:
            return []
        # One row spoiled the batch: keep every other one, return the failures.
        failures: list[StoreError] = []
        with self.transaction() as conn:
            for (response, _, _), values in zip(responses, rows, strict=True):
                conn.execute("SAVEPOINT one_row")
                try:
                    self._insert_response(conn, values)
                except sqlite3.Error as error:
                    conn.execute("ROLLBACK TO one_row")
                    failures.append(_response_error(session_id, response, error))
                conn.execute("RELEASE one_row")
            conn.executemany(_CACHE_INSERT, cache_rows)
        return failures

    def delete_failed_responses(self, session_id: str) -> int:
        """Delete the session's error responses and every later turn of their conversations
        (their context changes), so a resume asks them again; return how many went."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM responses WHERE session = ? AND EXISTS (SELECT 1 FROM responses e"
                " WHERE e.conversation_key = responses.conversation_key"
                " AND e.error IS NOT NULL AND e.turn <= responses.turn)",
                (session_id,),
            )
        self.refresh_counts(session_id)
        return cursor.rowcount

    def iter_responses(self, session_id: str) -> Iterator[dict[str, Any]]:
        """Response rows in conversation order, then turn."""
        yield from self._query(
            "SELECT r.* FROM responses r JOIN conversations c ON c.pk = r.conversation_key"
            " WHERE r.session = ? ORDER BY c.position, r.turn",
            (session_id,),
        )

    def load_responses(self, session_id: str) -> dict[AnswerKey, Response]:
        with self._damaged_rows("responses", session_id):
            return {
                (row["conversation"], row["turn"]): row_to_response(row)
                for row in self.iter_responses(session_id)
            }

    def load_answers(self, session_id: str) -> dict[AnswerKey, Answer]:
        """(conversation id, turn) -> parsed answer: what the oracles read."""
        with self._damaged_rows("responses", session_id):
            return self._answers(session_id)

    def _answers(self, session_id: str) -> dict[AnswerKey, Answer]:
        return {
            (row["conversation"], row["turn"]): Answer(row["answer"])
            for row in self._query(
                "SELECT conversation, turn, answer FROM responses WHERE session = ?",
                (session_id,),
            )
        }

    # -- verdicts -------------------------------------------------------------------------

    def replace_verdicts(
        self,
        session_id: str,
        verdicts: Iterable[Verdict],
        *,
        report: Mapping[str, Any] | None = None,
        engine: str = "",
        **fields: Any,
    ) -> int:
        """Replace the session's verdicts with `verdicts` (and its stored report with
        `report`, made by `engine`; none when None) and set `fields` of the session row, in
        one transaction; return the count."""
        with self.transaction() as conn:
            count = self._replace_evaluation(conn, session_id, verdicts, report, engine)
            if fields:
                fields["updated"] = now_iso()
                assignments = ", ".join(f"{name} = ?" for name in fields)
                conn.execute(
                    f"UPDATE sessions SET {assignments} WHERE id = ?",
                    (*fields.values(), session_id),
                )
        return count

    def _replace_evaluation(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        verdicts: Iterable[Verdict] | None,
        report: Mapping[str, Any] | None,
        engine: str,
    ) -> int:
        """The session's verdicts (and report) replaced (the stored verdicts kept when
        `verdicts` is None); the number of verdicts stored."""
        conn.execute("DELETE FROM session_reports WHERE session = ?", (session_id,))
        if verdicts is not None:
            conn.execute("DELETE FROM verdicts WHERE session = ?", (session_id,))
            keys = dict(
                conn.execute("SELECT id, pk FROM relations WHERE session = ?", (session_id,))
            )
            self._insert_verdicts(conn, session_id, keys, verdicts)
        count = int(
            conn.execute(
                "SELECT COUNT(*) FROM verdicts WHERE session = ?", (session_id,)
            ).fetchone()[0]
        )
        if report is not None:
            reports.write_report(conn, session_id, engine=engine, report=report, verdicts=count)
            rollups.write_result_views(conn, session_id)  # the explorer's views (store.views)
        return count

    def clear_evaluation(self, session_id: str) -> None:
        """Delete the session's verdicts and stored report (a streamed run stores new ones
        chunk by chunk; its report is stale until the run's end stores the new one)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM session_reports WHERE session = ?", (session_id,))
            conn.execute("DELETE FROM verdicts WHERE session = ?", (session_id,))

    def append_verdicts(
        self, session_id: str, verdicts: Iterable[Verdict], relation_keys: Mapping[str, int]
    ) -> None:
        """Store more verdicts of the session (`relation_keys`: relation id -> row key of
        the relations they name) in one transaction."""
        with self.transaction() as conn:
            self._insert_verdicts(conn, session_id, relation_keys, verdicts)

    def streamable(self, session_id: str) -> bool:
        """Can the session be asked and evaluated in chunks of relations (store.chunks)?"""
        return chunks.streamable(self.conn, session_id)

    def iter_chunks(
        self, session_id: str, size: int, *, conversations: bool = True, responses: bool = True
    ) -> Iterator[chunks.SessionChunk]:
        """The session `size` relations at a time (store.chunks.iter_chunks)."""
        with self._damaged_rows("conversations", session_id):
            yield from chunks.iter_chunks(
                self.conn, session_id, size, conversations=conversations, responses=responses
            )

    def conversation_ids(self, keys: Sequence[int]) -> Mapping[int, str]:
        """Conversation row key -> id."""
        return chunks.conversation_ids(self.conn, keys)

    @staticmethod
    def _insert_verdicts(
        conn: sqlite3.Connection,
        session_id: str,
        relation_keys: Mapping[str, int],
        verdicts: Iterable[Verdict],
    ) -> None:
        """The session's verdicts as rows (store.records.verdict_values; `relation_keys`:
        relation id -> row key), streamed into one statement."""
        conn.executemany(
            _VERDICT_INSERT,
            (verdict_values(session_id, relation_keys, verdict) for verdict in verdicts),
        )

    def read_report(
        self, session_id: str, *, engine: str, limit: int = 20
    ) -> reports.StoredReport | None:
        """The session's stored report and its first `limit` errors; None when there is
        none or it is stale (store.reports)."""
        with self._damaged_rows("session_reports", session_id):
            try:
                return reports.read_report(self.conn, session_id, engine=engine, limit=limit)
            except sqlite3.Error as error:
                raise StoreError(f"{self.path}: {error}") from None

    def count_cached(self, session_id: str) -> int:
        """Stored responses of the session that were reused (memo, cache or a shared call)."""
        row = self.conn.execute(
            "SELECT COUNT(*) FROM responses WHERE session = ? AND cached", (session_id,)
        ).fetchone()
        return int(row[0])

    def iter_verdicts(self, session_id: str) -> Iterator[dict[str, Any]]:
        yield from self._query(
            "SELECT * FROM verdicts WHERE session = ? ORDER BY id", (session_id,)
        )

    def load_verdicts(self, session_id: str) -> list[Verdict]:
        with self._damaged_rows("verdicts", session_id):
            return [row_to_verdict(row) for row in self.iter_verdicts(session_id)]

    # -- response cache -------------------------------------------------------------------

    def cache_get(self, key: str) -> tuple[str, int] | None:
        """(raw text, tokens) cached for `key`, or None."""
        row = self.conn.execute(
            "SELECT raw, tokens FROM response_cache WHERE key = ?", (key,)
        ).fetchone()
        return (row[0], row[1]) if row is not None else None

    def cache_put(self, key: str, model: str, raw: str, tokens: int) -> None:
        self.conn.execute(
            _CACHE_INSERT, (key, redact_spec(model), storable_text(raw), tokens, now_iso())
        )
