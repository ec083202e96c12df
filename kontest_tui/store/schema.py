"""The session database schema as an ordered list of migrations, and the code applying them.

Migration N (1-based) takes a database at version N-1 to version N. `schema_version` holds
one row per applied migration, so the file says which code created it. Tables are plain
SQLite with foreign keys and indexes: the file opens as it is in Datasette or sqlite-utils.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
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
        """,
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
        """,
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


_V6_TABLES = """
CREATE TABLE kg_snapshots (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    nodes INTEGER NOT NULL DEFAULT 0,
    edges INTEGER NOT NULL DEFAULT 0,
    json TEXT NOT NULL
);
CREATE TABLE sessions_v6 (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN
        ('created', 'running', 'paused', 'cancelled', 'done', 'failed')),
    kg_name TEXT NOT NULL,
    kg_snapshot INTEGER NOT NULL REFERENCES kg_snapshots (id),
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
    failed INTEGER NOT NULL DEFAULT 0,
    retries INTEGER NOT NULL DEFAULT 0,
    started TEXT,
    finished TEXT,
    elapsed_s REAL NOT NULL DEFAULT 0,
    message TEXT,
    oracle_errors INTEGER,
    oracle_error_rate REAL,
    kinds_json TEXT
);
CREATE TABLE relations_v6 (
    pk INTEGER PRIMARY KEY,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    parent TEXT NOT NULL,
    child TEXT NOT NULL,
    parent_label TEXT NOT NULL,
    child_label TEXT NOT NULL,
    type TEXT NOT NULL,
    path TEXT NOT NULL,
    UNIQUE (session, id)
);
CREATE TABLE conversations_v6 (
    pk INTEGER PRIMARY KEY,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    relation TEXT NOT NULL,
    relation_key INTEGER REFERENCES relations (pk) ON DELETE SET NULL,
    shape TEXT NOT NULL,
    label TEXT NOT NULL,
    test_kind TEXT NOT NULL,
    turns TEXT NOT NULL,
    expected TEXT NOT NULL,
    system_prompt TEXT,
    meta TEXT,
    UNIQUE (session, id)
);
CREATE TABLE responses_v6 (
    id INTEGER PRIMARY KEY,
    conversation_key INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    conversation TEXT NOT NULL,
    turn INTEGER NOT NULL,
    raw TEXT NOT NULL,
    answer TEXT NOT NULL,
    error TEXT,
    latency_ms REAL NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    cached INTEGER NOT NULL DEFAULT 0,
    cut INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session, conversation, turn)
);
CREATE TABLE verdicts_v6 (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    oracle TEXT NOT NULL,
    relation TEXT NOT NULL,
    relation_key INTEGER REFERENCES relations (pk) ON DELETE SET NULL,
    template TEXT,
    error INTEGER NOT NULL,
    refs TEXT NOT NULL,
    answers TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
)
"""

_V6_COPY = """
INSERT INTO sessions_v6 (id, created, updated, status, kg_name, kg_snapshot, templates_json,
    template_ids, model, options_json, seed, depth, per_path, relations, conversations, planned,
    answered, failed, retries, started, finished, elapsed_s, message, oracle_errors,
    oracle_error_rate, kinds_json)
SELECT s.id, s.created, s.updated, s.status, s.kg_name, k.id, s.templates_json, s.template_ids,
    s.model, s.options_json, s.seed, s.depth, s.per_path, s.relations, s.conversations,
    s.planned,
    (SELECT COUNT(*) FROM responses r WHERE r.session = s.id AND r.error IS NULL),
    (SELECT COUNT(*) FROM responses r WHERE r.session = s.id AND r.error IS NOT NULL),
    s.retries, s.started, s.finished, s.elapsed_s, s.message, s.test_errors, s.error_rate,
    s.kinds_json
FROM sessions s JOIN _kg_of_session m ON m.session = s.id JOIN kg_snapshots k ON k.sha256 = m.sha256
ORDER BY s.rowid;
INSERT INTO relations_v6 (session, id, position, parent, child, parent_label, child_label,
    type, path)
SELECT session, id, position, parent, child, parent_label, child_label, type, path
FROM relations ORDER BY session, position;
INSERT INTO conversations_v6 (session, id, position, relation, relation_key, shape, label,
    test_kind, turns, expected, system_prompt, meta)
SELECT c.session, c.id, c.position, c.relation,
    (SELECT r.pk FROM relations_v6 r WHERE r.session = c.session AND r.id = c.relation),
    c.kind, c.label, c.test_kind, c.turns, c.expected, c.system_prompt, c.meta
FROM conversations c ORDER BY c.session, c.position;
INSERT INTO responses_v6 (id, conversation_key, session, conversation, turn, raw, answer,
    error, latency_ms, tokens, attempts, created, cached, cut)
SELECT r.id,
    (SELECT c.pk FROM conversations_v6 c WHERE c.session = r.session AND c.id = r.conversation),
    r.session, r.conversation, r.turn, r.raw, r.answer, r.error, r.latency_ms, r.tokens,
    r.attempts, r.created, r.cached, r.cut
FROM responses r ORDER BY r.id;
INSERT INTO verdicts_v6 (id, session, oracle, relation, relation_key, template, error, refs,
    answers, detail)
SELECT v.id, v.session, v.oracle, v.relation,
    (SELECT r.pk FROM relations_v6 r WHERE r.session = v.session AND r.id = v.relation),
    v.template, v.error, v.refs, v.answers, v.detail
FROM verdicts v ORDER BY v.id;
DROP TABLE verdicts;
DROP TABLE responses;
DROP TABLE conversations;
DROP TABLE relations;
DROP TABLE sessions;
DROP TABLE _kg_of_session;
ALTER TABLE sessions_v6 RENAME TO sessions;
ALTER TABLE relations_v6 RENAME TO relations;
ALTER TABLE conversations_v6 RENAME TO conversations;
ALTER TABLE responses_v6 RENAME TO responses;
ALTER TABLE verdicts_v6 RENAME TO verdicts;
CREATE INDEX idx_sessions_created ON sessions (created);
CREATE INDEX idx_sessions_kg ON sessions (kg_snapshot);
CREATE INDEX idx_conversations_relation ON conversations (session, relation);
CREATE INDEX idx_conversations_relation_key ON conversations (relation_key);
CREATE INDEX idx_responses_created ON responses (session, created);
CREATE INDEX idx_responses_conversation ON responses (conversation_key);
CREATE INDEX idx_verdicts_session ON verdicts (session, oracle);
CREATE INDEX idx_verdicts_relation ON verdicts (relation_key)
"""

# Views for reading a database as it is (Datasette, sqlite-utils, the sqlite3 shell).
_RESPONSE_DETAILS = """
CREATE VIEW response_details AS
SELECT r.id AS response, r.session, s.model, s.kg_name AS kg,
    c.id AS conversation, c.test_kind, c.shape, c.label,
    r.turn + 1 AS turn_number,
    json_extract(c.turns, '$[' || r.turn || '].text') AS question,
    json_extract(c.turns, '$[' || r.turn || '].template') AS template,
    c.relation, rel.parent_label, rel.child_label, rel.type AS relation_type,
    r.raw AS answer_text, r.answer, r.error IS NOT NULL AS failed, r.error AS failure,
    r.attempts, r.latency_ms, r.tokens, r.cached, r.cut AS cut_chars, r.created
FROM responses r
JOIN conversations c ON c.pk = r.conversation_key
JOIN sessions s ON s.id = r.session
LEFT JOIN relations rel ON rel.pk = c.relation_key
"""
_VERDICT_DETAILS = """
CREATE VIEW verdict_details AS
SELECT v.id AS verdict, v.session, s.model, v.oracle, v.template,
    v.error AS inconsistent, v.relation, rel.parent_label, rel.child_label,
    rel.type AS relation_type, v.answers, v.refs, v.detail
FROM verdicts v
JOIN sessions s ON s.id = v.session
LEFT JOIN relations rel ON rel.pk = v.relation_key
"""
_V6_VIEWS = _RESPONSE_DETAILS + ";" + _VERDICT_DETAILS


def _readable_schema(conn: sqlite3.Connection) -> None:
    """Version 6, for reading the file in Datasette: single-column keys on relations and
    conversations (`pk`) that foreign keys point at (`responses.conversation_key`,
    `conversations.relation_key`, `verdicts.relation_key`); the KG snapshot stored once per
    distinct graph in `kg_snapshots` (never rewritten by a status update); clear names
    (`sessions.failed` turns vs `oracle_errors`, `oracle_error_rate`; `conversations.shape`
    atomic | sequential beside `test_kind`); views `response_details` and `verdict_details`.
    Every row is kept (tables rebuilt and copied; foreign keys are off while it runs)."""
    conn.execute("CREATE TEMP TABLE _kg_of_session (session TEXT PRIMARY KEY, sha256 TEXT)")
    _execute_script(conn, _V6_TABLES)
    for session, kg_json in conn.execute("SELECT id, kg_json FROM sessions").fetchall():
        name, nodes, edges = kg_summary(kg_json)
        digest = hashlib.sha256(kg_json.encode("utf-8", "surrogatepass")).hexdigest()
        conn.execute(
            "INSERT OR IGNORE INTO kg_snapshots (sha256, name, nodes, edges, json)"
            " VALUES (?, ?, ?, ?, ?)",
            (digest, name, nodes, edges, kg_json),
        )
        conn.execute("INSERT INTO _kg_of_session VALUES (?, ?)", (session, digest))
    _execute_script(conn, _V6_COPY)
    _execute_script(conn, _V6_VIEWS)


def kg_summary(kg_json: str) -> tuple[str, int, int]:
    """(name, node count, edge count) of a KG snapshot's JSON text (blank when unreadable)."""
    try:
        data = json.loads(kg_json)
    except ValueError:
        return "", 0, 0
    if not isinstance(data, dict):
        return "", 0, 0
    nodes, edges = data.get("nodes"), data.get("edges")
    return (
        str(data.get("name") or ""),
        len(nodes) if isinstance(nodes, list) else 0,
        len(edges) if isinstance(edges, list) else 0,
    )


def _add_session_reports(conn: sqlite3.Connection) -> None:
    """Version 7: the report of a session's last evaluation, stored with its verdicts, so
    `kontest report` reads it instead of re-evaluating every answer. `engine` names the code
    that evaluated (results.evaluate.evaluation_engine); `responses` and `answers_until` (the
    count and newest `created` of the response rows evaluated) tell whether answers were
    added or deleted since; either differing makes the stored report stale. Triggers drop
    the stored report when a row it was made from is changed in place (by any writer: a
    hand edit in the sqlite3 shell or Datasette too): a response, conversation, relation or
    verdict updated, a response deleted, what the session asks (model, kinds, templates,
    options) or its KG snapshot rewritten. Inserts, the run's hot path, fire no trigger."""
    _execute_script(
        conn,
        """
        CREATE TABLE session_reports (
            session TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            engine TEXT NOT NULL,
            responses INTEGER NOT NULL,
            answers_until TEXT,
            verdicts INTEGER NOT NULL,
            report TEXT NOT NULL,
            created TEXT NOT NULL
        )
        """,
    )
    for trigger in _REPORT_TRIGGERS:  # one statement each (their bodies hold a `;`)
        conn.execute(trigger)


_STALE = "DELETE FROM session_reports WHERE session IN ({})"
_REPORT_TRIGGERS = (
    "CREATE TRIGGER session_reports_response_updated AFTER UPDATE ON responses BEGIN "
    + _STALE.format("old.session, new.session")
    + "; END",
    "CREATE TRIGGER session_reports_response_deleted AFTER DELETE ON responses BEGIN "
    + _STALE.format("old.session")
    + "; END",
    "CREATE TRIGGER session_reports_conversation_updated AFTER UPDATE ON conversations BEGIN "
    + _STALE.format("old.session, new.session")
    + "; END",
    "CREATE TRIGGER session_reports_relation_updated AFTER UPDATE ON relations BEGIN "
    + _STALE.format("old.session, new.session")
    + "; END",
    "CREATE TRIGGER session_reports_verdict_updated AFTER UPDATE ON verdicts BEGIN "
    + _STALE.format("old.session, new.session")
    + "; END",
    "CREATE TRIGGER session_reports_session_updated AFTER UPDATE OF model, kinds_json,"
    " templates_json, template_ids, options_json, kg_snapshot ON sessions BEGIN "
    + _STALE.format("old.id, new.id")
    + "; END",
    "CREATE TRIGGER session_reports_kg_updated AFTER UPDATE ON kg_snapshots BEGIN "
    + _STALE.format("SELECT id FROM sessions WHERE kg_snapshot = old.id")
    + "; END",
)


_V8_RESPONSES = """
DROP VIEW response_details;
CREATE TABLE responses_v8 (
    id INTEGER PRIMARY KEY,
    conversation_key INTEGER NOT NULL REFERENCES conversations (pk) ON DELETE CASCADE,
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    conversation TEXT NOT NULL,
    turn INTEGER NOT NULL,
    raw TEXT NOT NULL,
    answer TEXT NOT NULL,
    error TEXT,
    latency_ms REAL NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 1,
    created TEXT NOT NULL,
    cached INTEGER NOT NULL DEFAULT 0,
    cut INTEGER NOT NULL DEFAULT 0,
    UNIQUE (conversation_key, turn)
);
INSERT INTO responses_v8 (id, conversation_key, session, conversation, turn, raw, answer, error,
    latency_ms, tokens, attempts, created, cached, cut)
SELECT id, conversation_key, session, conversation, turn, raw, answer, error, latency_ms, tokens,
    attempts, created, cached, cut
FROM responses ORDER BY id;
DROP TABLE responses;
ALTER TABLE responses_v8 RENAME TO responses;
CREATE INDEX idx_responses_created ON responses (session, created);
DROP INDEX idx_conversations_relation;
DROP INDEX idx_verdicts_session;
CREATE INDEX idx_verdicts_session ON verdicts (session, error)
"""


def _faster_inserts(conn: sqlite3.Connection) -> None:
    """Version 8, for a run's inserts: a response's turn is unique per conversation key (an
    integer index) instead of per (session, conversation id, turn), a long text index that
    cost more to insert than the row itself (a run's answers were stored ~3x slower); the
    index on conversation_key alone (now the unique one's prefix) and conversations'
    (session, relation) index (read by no query) go; verdicts are indexed by (session,
    error), which counts a session's verdicts and errors and finds its first errors without
    reading the rows (a stored report's check). Every response row is kept (the table is
    rebuilt and copied, with its triggers and view)."""
    _execute_script(conn, _V8_RESPONSES)
    for trigger in _REPORT_TRIGGERS:
        if " ON responses " in trigger:
            conn.execute(trigger)
    _execute_script(conn, _RESPONSE_DETAILS)


_V9_TABLES = """
CREATE TABLE result_views (
    session TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    version INTEGER NOT NULL,
    report_created TEXT,
    templates TEXT NOT NULL
);
CREATE TABLE result_nodes (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    node TEXT NOT NULL,
    name TEXT NOT NULL,
    label TEXT NOT NULL,
    preorder INTEGER NOT NULL,
    way TEXT NOT NULL,
    children INTEGER NOT NULL,
    own TEXT NOT NULL,
    subtree TEXT NOT NULL,
    PRIMARY KEY (session, node)
) WITHOUT ROWID;
CREATE TABLE result_edges (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    parent TEXT NOT NULL,
    position INTEGER NOT NULL,
    child TEXT NOT NULL,
    relation TEXT,
    answers TEXT NOT NULL,
    PRIMARY KEY (session, parent, position)
) WITHOUT ROWID;
CREATE TABLE result_errors (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    clear_rank INTEGER NOT NULL,
    tree_rank INTEGER NOT NULL,
    oracle TEXT NOT NULL,
    oracle_clear_rank INTEGER NOT NULL,
    oracle_tree_rank INTEGER NOT NULL,
    verdict INTEGER NOT NULL,
    relation TEXT NOT NULL,
    node TEXT NOT NULL,
    PRIMARY KEY (session, clear_rank)
) WITHOUT ROWID;
CREATE UNIQUE INDEX idx_result_errors_tree ON result_errors (session, tree_rank);
CREATE UNIQUE INDEX idx_result_errors_oracle_clear
    ON result_errors (session, oracle, oracle_clear_rank);
CREATE UNIQUE INDEX idx_result_errors_oracle_tree
    ON result_errors (session, oracle, oracle_tree_rank);
CREATE INDEX idx_result_errors_verdict ON result_errors (session, verdict);
CREATE TABLE result_gaps (
    session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    grp TEXT NOT NULL,
    position INTEGER NOT NULL,
    relation TEXT NOT NULL,
    PRIMARY KEY (session, grp, position)
) WITHOUT ROWID;
CREATE INDEX idx_relations_child ON relations (session, child)
"""
# A report that goes (stale, replaced by hand, its session changed) takes its views along.
_V9_TRIGGER = (
    "CREATE TRIGGER result_views_report_deleted AFTER DELETE ON session_reports BEGIN "
    + "; ".join(
        f"DELETE FROM {table} WHERE session = old.session"
        for table in (
            "result_errors",
            "result_gaps",
            "result_edges",
            "result_nodes",
            "result_views",
        )
    )
    + "; END"
)


def _add_result_views(conn: sqlite3.Connection) -> None:
    """Version 9, for the explorer's views over a session (store.views): tables derived from
    the stored report and verdicts (store.rollups writes them with the report; a session
    stored before is given them when its results are first opened): the results tree's nodes
    with their roll-ups and its edges, every error ranked in each order, the gap lists
    numbered; relations indexed by child (the relations into a node)."""
    _execute_script(conn, _V9_TABLES)
    conn.execute(_V9_TRIGGER)


def _add_probes(conn: sqlite3.Connection) -> None:
    """Version 10: questions asked by hand about one relation (probe mode, run.probe): the question, the
    template text it was filled from (NULL when typed), the model's reply and what was read
    from it. A probe belongs to the session it was asked from (deleted with it). No oracle
    reads this table, so probes change no metric; `promoted` says what a probe became
    ('template' or 'synonym'), which is then asked as part of the session."""
    _execute_script(
        conn,
        """
        CREATE TABLE probes (
            id INTEGER PRIMARY KEY,
            session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            relation TEXT NOT NULL,
            model TEXT NOT NULL,
            question TEXT NOT NULL,
            template TEXT,
            raw TEXT NOT NULL,
            answer TEXT NOT NULL,
            error TEXT,
            latency_ms REAL NOT NULL DEFAULT 0,
            created TEXT NOT NULL,
            promoted TEXT
        );
        CREATE INDEX idx_probes_session ON probes (session, relation)
        """,
    )


_RESPONSE_DETAILS_V11 = _RESPONSE_DETAILS.replace(
    "r.cut AS cut_chars,", "r.cut AS cut_chars, r.stopped,"
)


def _add_response_stopped(conn: sqlite3.Connection) -> None:
    """Version 11: `responses.stopped`, why an answer ended before the model finished
    ("length": the token limit, "timeout": the call's time ran out; NULL: it did not), and
    two partial indexes, on the rows that failed and on the rows that were stopped, so a
    session's counts are read from its rows while it runs (or after a crash) without
    reading every answer. The rows they index are few: an answer that ends normally costs
    nothing more to insert."""
    _execute_script(
        conn,
        """
        ALTER TABLE responses ADD COLUMN stopped TEXT
            CHECK (stopped IS NULL OR stopped IN ('length', 'timeout'));
        CREATE INDEX idx_responses_failed ON responses (session) WHERE error IS NOT NULL;
        CREATE INDEX idx_responses_stopped ON responses (session, stopped)
            WHERE stopped IS NOT NULL;
        DROP VIEW response_details
        """,
    )
    _execute_script(conn, _RESPONSE_DETAILS_V11)


def _add_headline_and_fresh(conn: sqlite3.Connection) -> None:
    """Version 12: a session's headline rate on its row, `headline_measure` (what the rate
    is: kontest, logic, factcheck, variant or annotation; oracles.measures.headline_of) and
    `headline_rate` (None before any test), written with each stored report, so the session
    lists show a logic-only session's hallucination rate and not a KONTEST rate of 0; and
    `fresh_conversations` (1: every conversation was asked from scratch, `kontest run
    --fresh-conversations`, the KONTEST paper's setting). Sessions with a stored report get
    their headline from it."""
    from kontest_tui.kinds.registry import builtin_measures
    from kontest_tui.oracles.measures import headline_of

    _execute_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN headline_measure TEXT;
        ALTER TABLE sessions ADD COLUMN headline_rate REAL;
        ALTER TABLE sessions ADD COLUMN fresh_conversations INTEGER NOT NULL DEFAULT 0
        """,
    )
    for session, text in conn.execute("SELECT session, report FROM session_reports").fetchall():
        try:
            report = json.loads(text)
        except ValueError:
            continue
        if isinstance(report, dict):
            headline = headline_of(report, builtin_measures())
            conn.execute(
                "UPDATE sessions SET headline_measure = ?, headline_rate = ? WHERE id = ?",
                (headline["measure"] or None, headline["rate"], session),
            )


def _add_session_parent(conn: sqlite3.Connection) -> None:
    """Version 13, for asking again what changed (run.rerun): `sessions.parent`, the session
    a session was asked again from (its answers reused where a question's text did not
    change; NULL for a session asked from scratch, and when the parent is deleted), and
    `responses.origin`, the session an answer was taken from (NULL: asked in this session),
    so a reused answer is told from one the model gave in this session."""
    _execute_script(
        conn,
        """
        ALTER TABLE sessions ADD COLUMN parent TEXT REFERENCES sessions (id) ON DELETE SET NULL;
        ALTER TABLE responses ADD COLUMN origin TEXT;
        CREATE INDEX idx_sessions_parent ON sessions (parent) WHERE parent IS NOT NULL
        """,
    )


def _add_response_margin(conn: sqlite3.Connection) -> None:
    """Version 14: `responses.p_yes`, a yes/no answer's margin: P(yes | yes or no) of its first
    token, from the server's log-probabilities (domain.margins); NULL where the server gave
    none or the question's answer is a letter or a name. Answers cut before anything readable
    are stored with `answer = 'cut'` (no column: the answer column takes any Answer value)."""
    conn.execute(
        "ALTER TABLE responses ADD COLUMN p_yes REAL"
        " CHECK (p_yes IS NULL OR (p_yes >= 0 AND p_yes <= 1))"
    )


def _add_find_sort_and_place(conn: sqlite3.Connection) -> None:
    """Version 15 (the explorer's find, sorted errors and place): `result_nodes.search`, a
    node's label, aliases and id as the results' find compares them (store.search: one
    line each, lower case, accents and punctuation removed, kg.names.normalise_name);
    `result_errors` gains the relation's parent, the verdict's template, whether every
    answer it compared is a yes or a no (`clear`) and its rank by relation name, with
    indexes for the Errors tab's filters and orders (store.error_list); `session_places`,
    where the explorer was in each session's results (the node selected, the error shown,
    errors only), so they reopen there. The derived tables are built again for this
    (store.rollups.VERSION 4)."""
    _execute_script(
        conn,
        """
        ALTER TABLE result_nodes ADD COLUMN search TEXT NOT NULL DEFAULT '';
        ALTER TABLE result_errors ADD COLUMN parent TEXT NOT NULL DEFAULT '';
        ALTER TABLE result_errors ADD COLUMN template TEXT NOT NULL DEFAULT '';
        ALTER TABLE result_errors ADD COLUMN clear INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE result_errors ADD COLUMN name_rank INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX idx_result_errors_node ON result_errors (session, node);
        CREATE INDEX idx_result_errors_parent ON result_errors (session, parent);
        CREATE INDEX idx_result_errors_template ON result_errors (session, template, clear_rank);
        CREATE INDEX idx_result_errors_clear ON result_errors (session, clear, clear_rank);
        CREATE INDEX idx_result_errors_name ON result_errors (session, name_rank);
        CREATE TABLE session_places (
            session TEXT PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
            node TEXT NOT NULL DEFAULT '',
            verdict INTEGER,
            errors_only INTEGER NOT NULL DEFAULT 0,
            updated TEXT NOT NULL
        )
        """,
    )


def _add_confirmations(conn: sqlite3.Connection) -> None:
    """Version 16, confirmed errors (run.confirm, oracles.confirmation): `confirmations`, one
    row per error asked again (the error known by its oracle and the answers it compares,
    `refs` as `verdicts.refs`, so a session evaluated again keeps them): its status
    (confirmed, mixed, undecided, not_reproduced), its trials asked, counted and held, the
    model calls made for it, the draws, temperature and model; `confirmation_answers`, each
    answer a trial read (the question, reply, reading, margin, seed and draw; `asked` 0 when
    it is the session's own answer or another trial's), kept apart from `responses` so no
    figure of the session counts them. `result_errors` gains each error's status and whether
    it is weak (every answer it compares low-margin), for the Errors tab's column and
    filter, and its orders list confirmed errors first (store.rollups.VERSION 6)."""
    _execute_script(
        conn,
        """
        CREATE TABLE confirmations (
            session TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
            oracle TEXT NOT NULL,
            refs TEXT NOT NULL,
            relation TEXT NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('confirmed', 'mixed', 'undecided', 'not_reproduced')),
            trials INTEGER NOT NULL DEFAULT 0,
            counted INTEGER NOT NULL DEFAULT 0,
            held INTEGER NOT NULL DEFAULT 0,
            calls INTEGER NOT NULL DEFAULT 0,
            seconds REAL NOT NULL DEFAULT 0,
            draws INTEGER NOT NULL DEFAULT 0,
            temperature REAL,
            model TEXT NOT NULL,
            created TEXT NOT NULL,
            PRIMARY KEY (session, oracle, refs)
        ) WITHOUT ROWID;
        CREATE TABLE confirmation_answers (
            session TEXT NOT NULL,
            oracle TEXT NOT NULL,
            refs TEXT NOT NULL,
            trial INTEGER NOT NULL,
            position INTEGER NOT NULL,
            form TEXT NOT NULL,
            phrasing TEXT NOT NULL,
            draw INTEGER NOT NULL DEFAULT 0,
            seed INTEGER,
            conversation TEXT NOT NULL,
            turn INTEGER NOT NULL,
            question TEXT NOT NULL,
            raw TEXT NOT NULL,
            answer TEXT NOT NULL,
            error TEXT,
            p_yes REAL CHECK (p_yes IS NULL OR (p_yes >= 0 AND p_yes <= 1)),
            latency_ms REAL NOT NULL DEFAULT 0,
            asked INTEGER NOT NULL DEFAULT 1,
            holds INTEGER,
            PRIMARY KEY (session, oracle, refs, trial, position),
            FOREIGN KEY (session, oracle, refs)
                REFERENCES confirmations (session, oracle, refs) ON DELETE CASCADE
        ) WITHOUT ROWID;
        ALTER TABLE result_errors ADD COLUMN status TEXT NOT NULL DEFAULT '';
        ALTER TABLE result_errors ADD COLUMN weak INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX idx_result_errors_status ON result_errors (session, status, clear_rank)
        """,
    )


MIGRATIONS: tuple[Migration, ...] = (
    _create_core_tables,
    _add_response_cache,
    _add_session_results,
    _add_session_kinds,
    _add_session_leases,
    _readable_schema,
    _add_session_reports,
    _faster_inserts,
    _add_result_views,
    _add_probes,
    _add_response_stopped,
    _add_headline_and_fresh,
    _add_session_parent,
    _add_response_margin,
    _add_find_sort_and_place,
    _add_confirmations,
)
SCHEMA_VERSION = len(MIGRATIONS)


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string (what every timestamp column holds)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


_second: tuple[int, str] = (-1, "")  # the last second formatted by iso_at


def iso_at(epoch: float) -> str:
    """`time.time()` value `epoch` as `now_iso` writes it, formatted ~10x faster (the
    seconds part once per second): one is needed for every stored answer."""
    global _second
    second = int(epoch)
    micro = round((epoch - second) * 1_000_000)  # as datetime.fromtimestamp rounds
    if micro >= 1_000_000:
        second, micro = second + 1, micro - 1_000_000
    if _second[0] != second:
        _second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
    return _second[1] + _MILLIS[micro // 1000]


_MILLIS = tuple(f".{milli:03d}+00:00" for milli in range(1000))  # what follows the seconds


def read_version(conn: sqlite3.Connection) -> int | None:
    """The schema version of a kontest DB, 0 for an empty file, None for another SQLite DB."""
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "schema_version" in tables:
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0] or 0)
    return 0 if not tables else None


def apply_migrations(conn: sqlite3.Connection, upto: int = SCHEMA_VERSION) -> int:
    """Bring the DB from its version up to `upto`, each migration in its own transaction.

    Processes may open a new DB at the same time: each step takes the write lock
    (`BEGIN IMMEDIATE`) and reads the version inside it, so a step another process applied
    meanwhile is skipped, never applied twice; `schema_version` is created in the same
    transaction as the first migration, so no reader sees a half-made schema."""
    version = read_version(conn) or 0
    if version >= upto:
        return version
    # Tables are rebuilt by some migrations: no cascades while they are dropped (this pragma
    # is a no-op inside a transaction, so it is set here); the keys are checked after each.
    conn.execute("PRAGMA foreign_keys = OFF")
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            found = read_version(conn)
            if found is None:
                raise sqlite3.DatabaseError("it holds other tables")
            if found >= upto:
                conn.execute("COMMIT")
                return found
            number = found + 1
            if number == 1:
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_version"
                    " (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)"
                )
            MIGRATIONS[number - 1](conn)
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise sqlite3.IntegrityError(
                    f"migration {number}: {len(broken)} rows break a foreign key "
                    f"(first: {tuple(broken[0])})"
                )
            conn.execute(
                "INSERT INTO schema_version (version, applied) VALUES (?, ?)", (number, now_iso())
            )
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
