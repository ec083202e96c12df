"""The session database schema as an ordered list of migrations, and the code applying them.

Migration N (1-based) takes a database at version N-1 to version N. `schema_version` holds
one row per applied migration, so the file says which code created it. Tables are plain
SQLite with foreign keys and indexes: the file opens as it is in Datasette or sqlite-utils.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

Migration = Callable[[sqlite3.Connection], None]


def _execute_script(conn: sqlite3.Connection, script: str) -> None:
    """Run `;`-separated statements inside the caller's transaction (unlike executescript,
    which commits first)."""
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def _create_core_tables(conn: sqlite3.Connection) -> None:
    """Version 1: sessions, relations, conversations, responses, verdicts."""
    _execute_script(
        conn,
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            created TEXT NOT NULL,
            updated TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN
                ('created', 'running', 'paused', 'cancelled', 'done', 'failed')),
            kg_name TEXT NOT NULL,
            kg_json TEXT NOT NULL,
            templates_json TEXT NOT NULL,
            template_ids TEXT NOT NULL,
            model TEXT NOT NULL,
            options_json TEXT NOT NULL,
            seed INTEGER NOT NULL DEFAULT 0,
            depth INTEGER,
            per_path INTEGER NOT NULL DEFAULT 0,
            relations INTEGER NOT NULL DEFAULT 0,
            conversations INTEGER NOT NULL DEFAULT 0,
            planned INTEGER NOT NULL DEFAULT 0,
            answered INTEGER NOT NULL DEFAULT 0,
            errors INTEGER NOT NULL DEFAULT 0,
            retries INTEGER NOT NULL DEFAULT 0,
            started TEXT,
            finished TEXT,
            elapsed_s REAL NOT NULL DEFAULT 0,
            message TEXT
        );
        CREATE INDEX idx_sessions_created ON sessions (created);

        CREATE TABLE relations (
            session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            position INTEGER NOT NULL,
            parent TEXT NOT NULL,
            child TEXT NOT NULL,
            parent_label TEXT NOT NULL,
            child_label TEXT NOT NULL,
            type TEXT NOT NULL,
            path TEXT NOT NULL,
            PRIMARY KEY (session, id)
        );

        CREATE TABLE conversations (
            session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            id TEXT NOT NULL,
            position INTEGER NOT NULL,
            relation TEXT NOT NULL,
            kind TEXT NOT NULL,
            label TEXT NOT NULL,
            test_kind TEXT NOT NULL,
            turns TEXT NOT NULL,
            expected TEXT NOT NULL,
            system_prompt TEXT,
            meta TEXT,
            PRIMARY KEY (session, id)
        );
        CREATE INDEX idx_conversations_relation ON conversations (session, relation);

        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            session TEXT NOT NULL,
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            raw TEXT NOT NULL,
            answer TEXT NOT NULL,
            error TEXT,
            latency_ms REAL NOT NULL DEFAULT 0,
            tokens INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 1,
            created TEXT NOT NULL,
            UNIQUE (session, conversation, turn),
            FOREIGN KEY (session, conversation)
                REFERENCES conversations (session, id) ON DELETE CASCADE
        );

        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            oracle TEXT NOT NULL,
            relation TEXT NOT NULL,
            template TEXT,
            error INTEGER NOT NULL,
            refs TEXT NOT NULL,
            answers TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX idx_verdicts_session ON verdicts (session, oracle);
        """
    )


def _add_response_cache(conn: sqlite3.Connection) -> None:
    """Version 2: the response cache and a `cached` flag on responses."""
    _execute_script(
        conn,
        """
        CREATE TABLE response_cache (
            key TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            raw TEXT NOT NULL,
            tokens INTEGER NOT NULL DEFAULT 0,
            created TEXT NOT NULL
        );
        ALTER TABLE responses ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX idx_responses_created ON responses (session, created);
        """
    )


def _add_session_results(conn: sqlite3.Connection) -> None:
    """Version 3: the last evaluation's error rate and error count on the session row."""
    _execute_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN error_rate REAL;
        ALTER TABLE sessions ADD COLUMN test_errors INTEGER
        """,
    )


def _add_session_kinds(conn: sqlite3.Connection) -> None:
    """Version 4: the test kinds a session asks, their options and input problems (JSON).

    NULL means KONTEST paraphrases only, what every session before version 4 asked."""
    _execute_script(conn, "ALTER TABLE sessions ADD COLUMN kinds_json TEXT")


def _add_session_leases(conn: sqlite3.Connection) -> None:
    """Version 5: one owner per session being run (a lease, renewed while the run lives; its
    own table, so a heartbeat never rewrites the session row) and `responses.cut`, the
    characters dropped from an answer longer than the kept size."""
    _execute_script(
        conn,
        """
        ALTER TABLE responses ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE session_leases (
            session TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            owner TEXT NOT NULL,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            acquired TEXT NOT NULL,
            renewed TEXT NOT NULL
        )
        """,
    )


MIGRATIONS: tuple[Migration, ...] = (
    _create_core_tables,
    _add_response_cache,
    _add_session_results,
    _add_session_kinds,
    _add_session_leases,
)
SCHEMA_VERSION = len(MIGRATIONS)


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string (what every timestamp column holds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def read_version(conn: sqlite3.Connection) -> int | None:
    """The schema version of a kontest DB, 0 for an empty file, None for another SQLite DB."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)
    return 0 if not tables else None


def apply_migrations(conn: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Bring the DB from its version up to `upto`, each migration in its own transaction."""
    version = read_version(conn) or 0
    if version == 0:
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_version"
            " (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)"
        )
    for number in range(version + 1, upto + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[number - 1](conn)
            conn.execute(
                "INSERT INTO schema_version (version, applied) VALUES (?, ?)", (number, now_iso())
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return max(version, upto)
