"""The store: errors while creating a session and hand-edited rows are one
line (`StoreError`), never a traceback. Real SQLite files; nothing is mocked."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.errors import StoreError
from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.store.database import Store


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> str:
    code = run_cli(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("kontest: error: ")]
    assert code != 0 and len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def session_db(tmp_path: Path) -> Path:
    """A database holding one finished sim session of 3 relations."""
    path = tmp_path / "s.db"
    assert run_cli(["run", "--kg", "places", "--limit", "3", "--db", str(path), "-q"]) == 0
    return path


def edit(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(sql)
    conn.close()


def test_corrupted_page_while_creating_a_session(session_db, capsys) -> None:
    capsys.readouterr()
    conn = sqlite3.connect(session_db)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sessions'").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    with session_db.open("r+b") as handle:
        handle.seek((root - 1) * size)
        handle.write(b"\xde\xad" * (size // 2))
    argv = ["run", "--kg", "places", "--limit", "2", "--db", str(session_db), "-q"]
    one_error_line(capsys, argv, str(session_db), "malformed")


def test_read_only_database_while_creating_a_session(session_db) -> None:
    store = Store(session_db)
    store.conn.close()
    store.conn = sqlite3.connect(f"file:{session_db}?mode=ro", uri=True, isolation_level=None)
    with pytest.raises(StoreError, match="readonly"):
        create_session(store, SessionSpec(load_graph("places"), limit=2))
    store.close()


def test_locked_database_while_creating_a_session(session_db) -> None:
    store = Store(session_db)
    store.conn.execute("PRAGMA busy_timeout = 0")  # the store waits 10 s; a test must not
    holder = sqlite3.connect(session_db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="database is locked"):
            create_session(store, SessionSpec(load_graph("places"), limit=2))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        store.close()


@pytest.mark.parametrize(
    ("sql", "table"),
    [
        ("UPDATE conversations SET turns = '{bad' WHERE rowid = 1", "conversations"),
        ("UPDATE conversations SET turns = '[1]' WHERE rowid = 1", "conversations"),
        ("UPDATE conversations SET test_kind = 'zzz' WHERE rowid = 1", "conversations"),
        ("UPDATE responses SET answer = 'maybe' WHERE rowid = 1", "responses"),
        ("UPDATE relations SET path = '[' WHERE rowid = 1", "relations"),
        ("UPDATE sessions SET options_json = '{'", "sessions"),
        ("UPDATE session_reports SET report = json_remove(report, '$.gap')", "session_reports"),
    ],
)
def test_hand_edited_rows_report(session_db, capsys, sql, table) -> None:
    edit(session_db, sql)
    capsys.readouterr()
    one_error_line(capsys, ["report", "--db", str(session_db)], "damaged row", table)


def test_a_hand_edited_kg_snapshot_is_one_line_where_it_is_read(session_db, capsys) -> None:
    """The report does not need the KG (it is not read); an explanation names nodes by it."""
    edit(session_db, "UPDATE kg_snapshots SET json = '[1]'")
    capsys.readouterr()
    assert run_cli(["report", "--db", str(session_db)]) == 0
    capsys.readouterr()
    one_error_line(capsys, ["explain", "--db", str(session_db)], "damaged row", "kg_snapshots")


def test_hand_edited_turn_export(session_db, capsys) -> None:
    edit(session_db, "UPDATE responses SET turn = 99 WHERE rowid = 1")
    capsys.readouterr()
    one_error_line(capsys, ["export", "--db", str(session_db)], "damaged row", "no turn 99")
