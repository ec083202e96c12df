"""What cannot be stored is said: `report --re-evaluate` on a read-only database or on a
session a run holds is one error line and exit 1 (it stored nothing before and exited 0);
a run whose end cannot be written (a full disk: here SQLite's page limit) marks its session
failed, saying why, instead of leaving it "running"."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from kontest_tui.cli import run_cli
from kontest_tui.errors import StoreError
from kontest_tui.kg.io import load_graph
from kontest_tui.run.session import open_session_model, run_session
from kontest_tui.store import Store
from tests.support.sessions import store_sessions


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str], *words: str) -> None:
    code = run_cli(argv)
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.startswith("kontest: error: ")]
    assert code == 1 and not out, (code, out, err)
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]


def test_re_evaluate_on_a_read_only_database_says_so(tmp_path, capsys, monkeypatch) -> None:
    from kontest_tui.store import database

    db = tmp_path / "ro" / "s.db"
    db.parent.mkdir()
    store_sessions(str(db), [("sim", 3)])
    if os.geteuid() == 0:  # root writes anyway: the Store is told what another user finds
        monkeypatch.setattr(database, "_writable", lambda path: False)
    db.chmod(stat.S_IRUSR)
    db.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        one_error_line(capsys, ["report", "--db", str(db), "--re-evaluate"], "read only")
        one_error_line(capsys, ["report", "--db", str(db), "--re-evaluate", "--format", "html"])
        assert run_cli(["report", "--db", str(db)]) == 0  # evaluated in memory, as before
    finally:
        db.parent.chmod(stat.S_IRWXU)


def test_re_evaluate_while_a_run_holds_the_session(tmp_path, capsys) -> None:
    db = tmp_path / "s.db"
    (session_id,) = store_sessions(str(db), [("sim", 3)])
    with Store(db) as store:
        store.leases.acquire(session_id)  # this process, alive: a run holding it
        one_error_line(capsys, ["report", "--db", str(db), "--re-evaluate"], "a run is asking")


def stopped_before_its_end(tmp_path: Path) -> tuple[Path, str, int]:
    """A places session whose answers are all stored but whose run stopped before it was
    evaluated (no verdicts, no report, status cancelled), its file compacted: (path, id,
    answers)."""
    db = tmp_path / "full.db"
    (session_id,) = store_sessions(str(db), [("sim", 20)])
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM verdicts")
        conn.execute("DELETE FROM session_reports")
        conn.execute("UPDATE sessions SET status = 'cancelled'")
    conn.execute("VACUUM")
    answers = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    conn.close()
    return db, session_id, answers


def test_a_run_that_cannot_store_its_end_marks_the_session_failed(tmp_path) -> None:
    db, session_id, answers = stopped_before_its_end(tmp_path)

    async def resume() -> None:
        with Store(db) as store:
            # the disk is full: the file may not grow by one page (SQLITE_FULL)
            pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
            store.conn.execute(f"PRAGMA max_page_count = {pages}")
            model = open_session_model("sim", load_graph("places"))
            try:
                await run_session(store, session_id, model)
            finally:
                await model.aclose()

    with pytest.raises(StoreError, match="full"):
        asyncio.run(resume())
    conn = sqlite3.connect(db)
    status, message = conn.execute("SELECT status, message FROM sessions").fetchone()
    assert conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == answers
    assert conn.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0
    conn.close()
    assert status == "failed", message
    assert "full" in message and "--re-evaluate" in message
    # once there is room, the answers are evaluated and stored
    assert run_cli(["report", "--db", str(db), "--re-evaluate"]) == 0
