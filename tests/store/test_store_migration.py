"""Schema 6 (Datasette-readable) from a database made by schema 4, the last released one.

tests/data/sessions_v4.sql is the dump of a file written by kontest at schema 4 (three
sessions: the Kinawley replay, the same with two answers missing from the replay file, and
3 places relations asked of `sim`); sessions_v4_reports/ holds what `kontest report --format
json` printed for each of them then. Migrating must keep every row and every report.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path

import pytest
import sqlite_utils

from kontest_tui.results.evaluate import evaluate_session
from kontest_tui.store import SCHEMA_VERSION, Store

DATA = Path(__file__).resolve().parent.parent / "data"
DUMP = DATA / "sessions_v4.sql"
REPORTS = DATA / "sessions_v4_reports"
COMPLETE = "20261123-230519-00413e"
PARTIAL = "20261123-230524-87aa6d"  # 2 failed calls, then counted as invalid answers
PLACES = "20261123-230530-964e88"


# Report keys added after these files were recorded (consistency and accuracy apart,
# refusals, answers from cache, the findings): derived from the same answers, so left out of
# the equality.
NEW_REPORT_KEYS = (
    "refusals",
    "answers_from_cache",
    "consistency",
    "accuracy",
    "stopped",
    "rates",
    "headline",
    "findings",
    "curation",
    "cut",
    "margins",
)


def without_new_keys(report: Mapping[str, object]) -> dict[str, object]:
    return {key: value for key, value in report.items() if key not in NEW_REPORT_KEYS}


def make_v4_file(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(DUMP.read_text(encoding="utf-8"))
    conn.close()


def table_rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def test_migration_keeps_every_row_and_report(tmp_path) -> None:  # noqa: ANN001
    path = tmp_path / "old.db"
    make_v4_file(path)
    assert table_rows(path, "SELECT MAX(version) FROM schema_version") == [(4,)]
    counts = {
        table: table_rows(path, f"SELECT COUNT(*) FROM {table}")[0][0]
        for table in ("sessions", "relations", "conversations", "responses", "verdicts")
    }
    responses = table_rows(
        path,
        "SELECT id, session, conversation, turn, raw, answer, error, latency_ms, tokens,"
        " attempts, created, cached FROM responses ORDER BY id",
    )
    verdicts = table_rows(
        path,
        "SELECT id, session, oracle, relation, template, error, refs, answers, detail"
        " FROM verdicts ORDER BY id",
    )
    conversations = table_rows(
        path,
        "SELECT session, id, position, relation, kind, label, test_kind, turns, expected,"
        " system_prompt, meta FROM conversations ORDER BY session, position",
    )
    kg = dict(table_rows(path, "SELECT id, kg_json FROM sessions"))
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION == 16
        for session in (COMPLETE, PARTIAL, PLACES):
            expected = json.loads((REPORTS / f"{session}.json").read_text(encoding="utf-8"))
            report = evaluate_session(store, session).to_json()
            if session == PARTIAL:
                # schema 4 counted the 2 failed calls (and asked the turn after one of them)
                # as invalid answers; they are failed turns now, nothing else moves
                assert (expected["invalid"], report["invalid"], report["failed"]) == (3, 1, 2)
                assert report["executions"] == expected["executions"] - 2
                continue
            assert without_new_keys(report) == {**expected, "failed": 0}
            assert store.sessions.kg_snapshot(session) == json.loads(kg[session])
        row = store.sessions.get(PARTIAL)
        assert (row["answered"], row["failed"], row["oracle_errors"]) == (16, 2, 0)
    for table, count in counts.items():
        assert table_rows(path, f"SELECT COUNT(*) FROM {table}")[0][0] == count, table
    assert (
        table_rows(
            path,
            "SELECT id, session, conversation, turn, raw, answer, error, latency_ms, tokens,"
            " attempts, created, cached FROM responses ORDER BY id",
        )
        == responses
    )
    assert (
        table_rows(
            path,
            "SELECT id, session, oracle, relation, template, error, refs, answers, detail"
            " FROM verdicts ORDER BY id",
        )
        == verdicts
    )
    assert (
        table_rows(
            path,
            "SELECT session, id, position, relation, shape, label, test_kind, turns, expected,"
            " system_prompt, meta FROM conversations ORDER BY session, position",
        )
        == conversations
    )
    # the two Kinawley sessions share one KG snapshot
    assert table_rows(path, "SELECT COUNT(*) FROM kg_snapshots") == [(2,)]
    assert table_rows(path, "PRAGMA foreign_key_check") == []
    assert table_rows(path, "SELECT COUNT(*) FROM responses WHERE conversation_key IS NULL") == [
        (0,)
    ]


def test_views_join_questions_labels_and_models(tmp_path) -> None:  # noqa: ANN001
    """response_details: the question text, its template, relation labels, kind and model of
    each response; verdict_details: each verdict with its relation's labels."""
    path = tmp_path / "old.db"
    make_v4_file(path)
    Store(path).close()
    db = sqlite_utils.Database(path)
    rows = list(
        db.query(
            "SELECT * FROM response_details WHERE session = ? AND conversation = ? ORDER BY turn_number",
            [COMPLETE, "Q27>Q6410645/t1+t2"],
        )
    )
    assert [(r["turn_number"], r["question"], r["template"], r["answer"]) for r in rows] == [
        (1, "Does Ireland have a Kinawley?", "t1", "no"),
        (2, "Is there a Kinawley in Ireland?", "t2", "yes"),
    ]
    first = rows[0]
    assert (first["parent_label"], first["child_label"], first["shape"], first["test_kind"]) == (
        "Ireland",
        "Kinawley",
        "sequential",
        "kontest",
    )
    assert first["model"].startswith("replay:") and first["failed"] == 0
    failed = list(db.query("SELECT question, failure FROM response_details WHERE failed"))
    assert len(failed) == 2 and all("no recorded answer" in r["failure"] for r in failed)
    assert all(r["question"] == "Does Ireland have a Kinawley?" for r in failed)
    errors = list(
        db.query(
            "SELECT oracle, parent_label, child_label, template FROM verdict_details"
            " WHERE session = ? AND inconsistent ORDER BY verdict",
            [COMPLETE],
        )
    )
    assert [(e["oracle"], e["parent_label"], e["child_label"]) for e in errors] == [
        ("atomic", "Ireland", "Kinawley"),
        ("sequential_intra", "Ireland", "Kinawley"),
        ("sequential_inter", "Ireland", "Kinawley"),
        ("ontological", "Ireland", "Kinawley"),
    ]
    assert db.execute("SELECT COUNT(*) FROM response_details").fetchone()[0] == 54


def test_status_updates_never_rewrite_the_kg_snapshot(tmp_path) -> None:  # noqa: ANN001
    from kontest_tui.kg.io import load_graph
    from kontest_tui.run.api import SessionSpec, create_session

    with Store(tmp_path / "s.db") as store:
        kg = load_graph("places")
        one = create_session(store, SessionSpec(kg, limit=2))
        two = create_session(store, SessionSpec(kg, model="sim:careful", limit=3))
        assert store.conn.execute("SELECT COUNT(*) FROM kg_snapshots").fetchone()[0] == 1
        changes = store.conn.total_changes
        store.sessions.update(one, status="running", message="x")
        assert store.conn.total_changes - changes == 1  # one small sessions row
        assert "kg_json" not in {
            row[1] for row in store.conn.execute("PRAGMA table_info(sessions)")
        }
        store.sessions.delete(one)
        assert store.conn.execute("SELECT COUNT(*) FROM kg_snapshots").fetchone()[0] == 1
        store.sessions.delete(two)
        assert store.conn.execute("SELECT COUNT(*) FROM kg_snapshots").fetchone()[0] == 0


def test_a_read_only_old_file_is_migrated_in_memory_only(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from kontest_tui.store import database

    path = tmp_path / "old.db"
    make_v4_file(path)
    before = path.read_bytes()
    monkeypatch.setattr(database, "_writable", lambda path: False)
    with Store(path, create=False) as store:
        assert store.read_only and store.version == SCHEMA_VERSION
        expected = json.loads((REPORTS / f"{COMPLETE}.json").read_text(encoding="utf-8"))
        report = evaluate_session(store, COMPLETE).to_json()
        assert without_new_keys(report) == {**expected, "failed": 0}
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.db"]


def test_version_8_keeps_responses_and_their_triggers_and_view(tmp_path) -> None:  # noqa: ANN001
    """Schema 7 -> 8 rebuilds `responses` (a turn unique per conversation key): its rows, the
    triggers that drop a stale report and the response_details view all come through."""
    from kontest_tui.store.schema import apply_migrations

    path = tmp_path / "v7.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=7)
    conn.executescript(
        """
        INSERT INTO kg_snapshots (id, sha256, name, json) VALUES (1, 'x', 'toy', '{}');
        INSERT INTO sessions (id, created, updated, status, kg_name, kg_snapshot, templates_json,
            template_ids, model, options_json) VALUES ('s', 'a', 'a', 'done', 'toy', 1, '{}',
            '[]', 'sim', '{}');
        INSERT INTO relations (pk, session, id, position, parent, child, parent_label,
            child_label, type, path) VALUES (1, 's', 'A>B', 0, 'A', 'B', 'Ay', 'Bee', 'contains',
            '["A", "B"]');
        INSERT INTO conversations (pk, session, id, position, relation, relation_key, shape,
            label, test_kind, turns, expected) VALUES (5, 's', 'A>B/t1+t2', 0, 'A>B', 1,
            'sequential', 'A', 'kontest', '[{"relation": "A>B", "template": "t1", "text": "Q1?"},
            {"relation": "A>B", "template": "t2", "text": "Q2?"}]', '[]');
        INSERT INTO responses (id, conversation_key, session, conversation, turn, raw, answer,
            error, created) VALUES (7, 5, 's', 'A>B/t1+t2', 0, 'Yes', 'yes', NULL, 'c1'),
            (9, 5, 's', 'A>B/t1+t2', 1, '', 'invalid', 'HTTP 500', 'c2');
        INSERT INTO session_reports VALUES ('s', 'e', 2, 'c2', 0, '{}', 'c3');
        """
    )
    before = conn.execute("SELECT * FROM responses ORDER BY id").fetchall()
    conn.close()
    with Store(path) as store:
        assert store.version >= 8
    after = table_rows(path, "SELECT * FROM responses ORDER BY id")
    assert [row[: len(before[0])] for row in after] == before  # later versions add columns
    assert table_rows(
        path,
        "SELECT question, parent_label, answer, failed FROM response_details ORDER BY response",
    ) == [("Q1?", "Ay", "yes", 0), ("Q2?", "Ay", "invalid", 1)]
    plan = " ".join(
        str(row[-1])
        for row in table_rows(
            path, "EXPLAIN QUERY PLAN SELECT COUNT(*), SUM(error) FROM verdicts WHERE session = 's'"
        )
    )
    assert "COVERING INDEX idx_verdicts_session" in plan
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="conversation_key, responses.turn"):
            conn.execute(
                "INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer,"
                " created) VALUES (5, 's', 'A>B/t1+t2', 0, 'No', 'no', 'c4')"
            )
        conn.execute("UPDATE responses SET raw = 'Yes!' WHERE id = 7")  # the trigger: stale
        assert conn.execute("SELECT COUNT(*) FROM session_reports").fetchone() == (0,)
    finally:
        conn.close()
    with Store(path) as store:  # a failed turn is asked again: it and the turns after it go
        assert store.responses.delete_failed("s") == 1
        assert list(store.responses.load("s")) == [("A>B/t1+t2", 0)]


def test_processes_opening_a_new_db_at_once_all_get_it_migrated(tmp_path) -> None:  # noqa: ANN001
    """Twelve processes open one new file together: the version is read inside each step's
    write lock, so none applies a migration another already did (before: some failed with
    "not a kontest session database")."""
    import subprocess
    import sys

    path = tmp_path / "raced.db"
    script = (
        "import sys, time\n"
        "from kontest_tui.store.database import Store\n"
        "time.sleep(max(0.0, float(sys.argv[2]) - time.time()))\n"
        "Store(sys.argv[1]).close()\n"
    )
    import time

    start = time.time() + 1.5  # all of them past their imports, then open together
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(path), str(start)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(12)
    ]
    errors = [process.communicate(timeout=120)[1][-300:] for process in processes]
    assert [process.returncode for process in processes] == [0] * 12, errors
    from kontest_tui.store.schema import SCHEMA_VERSION

    conn = sqlite3.connect(path)
    versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
    assert versions == list(range(1, SCHEMA_VERSION + 1))


def test_version_11_adds_stopped_and_counts_a_session_from_indexes(tmp_path) -> None:  # noqa: ANN001
    """Schema 10 -> 11: `responses.stopped` (NULL for the rows before it), in the
    response_details view; a session list counts failed and stopped rows through their
    partial indexes, never reading the answers."""
    from kontest_tui.store.schema import apply_migrations

    path = tmp_path / "v10.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=10)
    conn.executescript(
        """
        INSERT INTO kg_snapshots (id, sha256, name, json) VALUES (1, 'x', 'toy', '{}');
        INSERT INTO sessions (id, created, updated, status, kg_name, kg_snapshot, templates_json,
            template_ids, model, options_json, planned) VALUES ('s', 'a', 'a', 'running', 'toy',
            1, '{}', '[]', 'sim', '{}', 4);
        INSERT INTO conversations (pk, session, id, position, relation, relation_key, shape,
            label, test_kind, turns, expected) VALUES (5, 's', 'c', 0, 'A>B', NULL,
            'sequential', 'A', 'kontest', '[{"text": "Q1?"}, {"text": "Q2?"}]', '[]');
        INSERT INTO responses (conversation_key, session, conversation, turn, raw, answer,
            error, created) VALUES (5, 's', 'c', 0, 'Yes', 'yes', NULL, 'c1'),
            (5, 's', 'c', 1, '', 'invalid', 'HTTP 500', 'c2');
        """
    )
    conn.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION
        store.conn.execute("UPDATE responses SET stopped = 'length' WHERE turn = 0")
        (row,) = list(store.sessions.listing())
        assert (row["answered"], row["failed"]) == (1, 1)  # from the rows: the run is going on
        assert (row["stopped_length"], row["stopped_timeout"]) == (1, 0)
        with pytest.raises(sqlite3.IntegrityError):
            store.conn.execute("UPDATE responses SET stopped = 'bored'")
        plan = " ".join(
            str(line[-1]) for line in store.conn.execute("EXPLAIN QUERY PLAN " + _session_list())
        )
    assert "idx_responses_failed" in plan and "idx_responses_stopped" in plan
    assert table_rows(path, "SELECT turn_number, stopped FROM response_details") == [
        (1, "length"),
        (2, None),
    ]


def _session_list() -> str:
    from kontest_tui.store import sessions

    return sessions._SESSION_LIST


def test_version_12_backfills_the_headline_from_stored_reports(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Version 12: `headline_measure` / `headline_rate` on the session row, from the stored
    report (a logic-only session: its hallucination rate, errors of all responses; a
    KONTEST one: its error rate), NULL without a report; `fresh_conversations` 0."""
    from kontest_tui.cli import run_cli
    from kontest_tui.store.schema import apply_migrations

    path = tmp_path / "v11.db"
    conn = sqlite3.connect(path, isolation_level=None)
    apply_migrations(conn, upto=11)
    logic = {
        "kinds": ["logic"],
        "accuracy": {"logic": {"asked": 8, "errors": 2, "correct": 3, "valid": 5}},
    }
    kontest = {"errors": {"total": 3}, "tests": {"atomic": 5, "ontological": 5}}
    conn.execute("INSERT INTO kg_snapshots (id, sha256, name, json) VALUES (1, 'x', 'toy', '{}')")
    for session, report in (("a", logic), ("b", kontest), ("c", None)):
        conn.execute(
            "INSERT INTO sessions (id, created, updated, status, kg_name, kg_snapshot,"
            " templates_json, template_ids, model, options_json, oracle_error_rate)"
            " VALUES (?, ?, 'u', 'done', 'toy', 1, '{}', '[]', 'sim', '{}', ?)",
            (session, f"2026-11-2{ord(session) - 96}", 0.3 if report is kontest else None),
        )
        if report is not None:
            conn.execute(
                "INSERT INTO session_reports (session, engine, responses, verdicts, report,"
                " created) VALUES (?, 'old', 0, 0, ?, 'c')",
                (session, json.dumps(report)),
            )
    conn.close()
    with Store(path) as store:
        assert store.version == SCHEMA_VERSION == 16
        rows = {row["id"]: row for row in store.sessions.listing()}
    assert (rows["a"]["headline_measure"], rows["a"]["headline_rate"]) == ("logic", 0.25)
    assert (rows["b"]["headline_measure"], rows["b"]["headline_rate"]) == ("kontest", 0.3)
    assert (rows["c"]["headline_measure"], rows["c"]["headline_rate"]) == (None, None)
    assert {row["fresh_conversations"] for row in rows.values()} == {0}
    capsys.readouterr()
    assert run_cli(["sessions", "--db", str(path)]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[1].endswith("25.0% hallucination rate")
    assert listed[2].endswith("30.0% KONTEST error rate")
    assert listed[3].endswith("-")
