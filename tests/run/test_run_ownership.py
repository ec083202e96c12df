"""One owner per session, an atomic finish, SIGTERM like Ctrl-C, reports on read-only files.

Traps of running a session: two resumes of one session asking the same turns (the second
would die on a UNIQUE constraint); `done` set before the verdicts are stored; SIGTERM leaving
the session `running`; a database in a read-only directory that cannot be reported on.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kontest_tui.errors import SessionBusyError, StoreError
from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import SessionSpec, create_session
from kontest_tui.run.session import run_session
from kontest_tui.store import Store
from kontest_tui.store import database as database_module
from kontest_tui.store import verdicts as verdicts_module
from tests.run.run_toys import (
    KINAWLEY_KG,
    KINAWLEY_REPLAY,
    PAPER,
    ToyModel,
    make_conversations,
    make_relations,
    store_session,
)
from tests.support.cli import kontest


def dead_pid() -> int:
    """The id of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def plant_lease(db: Path, session: str, *, pid: int, renewed: str, host: str | None = None) -> None:
    """A lease row as another process would have left it."""
    with Store(db) as store:
        store.conn.execute(
            "INSERT OR REPLACE INTO session_leases (session, owner, host, pid, acquired, renewed)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (session, f"other:{pid}:x", host or socket.gethostname(), pid, renewed, renewed),
        )


def kinawley_session(db: Path) -> str:
    with Store(db) as store:
        return create_session(
            store,
            SessionSpec(
                load_graph(KINAWLEY_KG), model=f"replay:{KINAWLEY_REPLAY}", template_set="paper"
            ),
        )


def test_a_live_owner_refuses_a_second_run_and_a_dead_one_is_taken_over(tmp_path, capsys) -> None:  # noqa: ANN001
    from kontest_tui.store.schema import now_iso

    db = tmp_path / "k.db"
    session = kinawley_session(db)
    # a live owner: this very process, renewed just now
    plant_lease(db, session, pid=os.getpid(), renewed=now_iso())
    code, out, err = kontest(capsys, "run", "--resume", session, "--db", db, "-q")
    assert code == 1 and out == ""
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            f"kontest: error: session {session} is being run by another kontest (pid {os.getpid()}"
        )
    )
    with Store(db) as store:
        assert list(store.responses.rows(session)) == []
    # killed with kill -9 on this host: its pid is gone, the lease is taken over at once
    plant_lease(db, session, pid=dead_pid(), renewed=now_iso())
    code, _, err = kontest(capsys, "run", "--resume", session, "--db", db, "-q")
    assert code == 0, err
    with Store(db) as store:
        assert store.sessions.get(session)["status"] == "done"
        assert store.conn.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0


def test_a_lease_not_renewed_for_a_minute_is_stale_on_any_host(tmp_path) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    session = kinawley_session(db)
    plant_lease(
        db, session, pid=os.getpid(), renewed="2020-01-01T00:00:00.000+00:00", host="elsewhere"
    )
    with Store(db) as store:
        lease = store.leases.acquire(session)
        assert lease.pid == os.getpid() and lease.owner.startswith(socket.gethostname())
        with pytest.raises(SessionBusyError, match="being run by another kontest"):
            store.leases.acquire(session)  # now ours and live: a second owner is refused
        assert store.leases.renew(lease)
        store.leases.release(lease)
        assert not store.leases.renew(lease)  # given back: no longer ours
    plant_lease(
        db, session, pid=os.getpid(), renewed="2999-01-01T00:00:00.000+00:00", host="elsewhere"
    )
    with Store(db) as store, pytest.raises(SessionBusyError):
        store.leases.acquire(session)  # another host, recently renewed: its pid says nothing


async def test_two_runs_of_one_session_at_once(tmp_path) -> None:  # noqa: ANN001
    """The second run is refused before it asks anything; the first completes alone."""
    relations = make_relations(3)
    conversations = make_conversations(relations)
    with Store(tmp_path / "s.db") as store, Store(tmp_path / "s.db") as other:
        session = store_session(store, relations, conversations)
        gate = asyncio.Event()
        first_model = ToyModel(delay=0.0)
        second_model = ToyModel()

        async def first() -> None:
            await run_session(
                store, session, first_model, events=None, on_executor=lambda executor: gate.set()
            )

        task = asyncio.create_task(first())
        await gate.wait()
        with pytest.raises(SessionBusyError):
            await run_session(other, session, second_model)
        await task
        assert second_model.calls == []
        rows = list(store.responses.rows(session))
        assert len(rows) == 18 and len({(r["conversation"], r["turn"]) for r in rows}) == 18
        assert store.sessions.get(session)["status"] == "done"


async def test_the_end_of_a_run_is_one_transaction(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """A failure while storing the verdicts leaves the session with no verdicts (never `done`
    without them), marked failed with the reason (not "running", as if a run still asked it)
    and without a lease; a resume then finishes it."""
    relations = make_relations(2)
    conversations = make_conversations(relations)
    with Store(tmp_path / "s.db") as store:
        session = store_session(store, relations, conversations)
        real = verdicts_module.insert_verdicts

        def broken(conn, *rows):  # noqa: ANN001, ANN002, ANN202
            real(conn, *rows)
            raise StoreError("disk full (simulated, after the verdict rows)")

        monkeypatch.setattr(verdicts_module, "insert_verdicts", broken)
        with pytest.raises(StoreError, match="disk full"):
            await run_session(store, session, ToyModel())
        row = store.sessions.get(session)
        assert row["status"] == "failed" and row["finished"] is None
        message = str(row["message"])
        assert "disk full" in message and "--re-evaluate" in message
        assert store.verdicts.load(session) == []
        assert store.conn.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0
        monkeypatch.setattr(verdicts_module, "insert_verdicts", real)
        model = ToyModel()
        outcome = await run_session(store, session, model)
        assert model.calls == [] and outcome.status == "done"
        assert len(store.verdicts.load(session)) == len(outcome.evaluation.verdicts) > 0


def test_sigterm_stops_a_run_like_ctrl_c(tmp_path) -> None:  # noqa: ANN001
    db = tmp_path / "k.db"
    command = [
        sys.executable,
        "-m",
        "kontest_tui.cli",
        "run",
        "--kg",
        "places",
        "--limit",
        "40",
        "--model",
        "sim:slow",
        "--db",
        str(db),
        "--no-cache",
        "-q",
    ]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2]
    )
    assert process.stderr is not None
    first = process.stderr.readline()  # "session ID: model sim:slow" once the run starts
    assert first.startswith("session "), first
    session = first.split()[1].rstrip(":")
    process.send_signal(signal.SIGTERM)
    rest = process.stderr.read()
    assert process.wait(timeout=60) == 143
    assert rest.strip().splitlines()[-1] == (
        f"kontest: terminated; resume with kontest run --resume {session} --db {db}"
    )
    with Store(db) as store:
        row = store.sessions.get(session)
        assert (row["status"], row["message"]) == ("cancelled", "interrupted")
        assert row["answered"] < row["planned"]
        assert store.conn.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0


def test_a_read_only_database_can_be_reported_on(tmp_path, capsys, monkeypatch) -> None:  # noqa: ANN001
    """Opened without writing: no WAL switch, no -wal/-shm files, the file unchanged; an older
    schema is migrated in memory only; writes fail with one line."""
    db = tmp_path / "k.db"
    assert (
        kontest(
            capsys,
            "run",
            "--kg",
            KINAWLEY_KG,
            "--model",
            f"replay:{KINAWLEY_REPLAY}",
            *PAPER,
            "--db",
            db,
            "-q",
        )[0]
        == 0
    )
    code, expected, _ = kontest(capsys, "report", "--db", db, "--format", "json")
    with Store(db) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("PRAGMA journal_mode = DELETE")
    before = db.read_bytes()
    # as root, permissions do not stop writes: say the file is not writable, as a read-only
    # mount or another user's file would
    monkeypatch.setattr(database_module, "_writable", lambda path: False)
    code, out, err = kontest(capsys, "report", "--db", db, "--format", "json")
    assert code == 0, err
    assert json.loads(out) == json.loads(expected)
    code, out, err = kontest(capsys, "sessions", "--db", db)
    assert code == 0 and "done" in out
    code, out, err = kontest(capsys, "export", "--db", db)
    assert code == 0 and len(out.splitlines()) == 18
    code, _, err = kontest(
        capsys,
        "run",
        "--kg",
        KINAWLEY_KG,
        "--model",
        f"replay:{KINAWLEY_REPLAY}",
        *PAPER,
        "--db",
        db,
        "-q",
    )
    assert code == 1 and len(err.strip().splitlines()) == 1 and "readonly" in err
    assert db.read_bytes() == before
    assert sorted(path.name for path in tmp_path.iterdir()) == ["k.db"]


def test_sighup_stops_a_run_like_sigterm(tmp_path) -> None:  # noqa: ANN001
    """A dropped SSH session (SIGHUP) ends `run` as SIGTERM does: cancelled, resumable, said."""
    db = tmp_path / "k.db"
    command = [sys.executable, "-m", "kontest_tui.cli", "run", "--kg", "places", "--limit", "40"]
    command += ["--model", "sim:slow", "--db", str(db), "--no-cache", "-q"]
    process = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[2]
    )
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("session "), first
    session = first.split()[1].rstrip(":")
    process.send_signal(signal.SIGHUP)
    rest = process.stderr.read()
    assert process.wait(timeout=60) == 129
    assert rest.strip().splitlines()[-1] == (
        f"kontest: hung up; resume with kontest run --resume {session} --db {db}"
    )
    with Store(db) as store:
        assert store.sessions.get(session)["status"] == "cancelled"
        assert store.conn.execute("SELECT COUNT(*) FROM session_leases").fetchone()[0] == 0


async def test_a_run_that_lost_its_lease_stops_asking_and_leaves_the_session(
    tmp_path, monkeypatch
) -> None:  # noqa: ANN001
    """Another process took the lease over (this run looked dead: paused past a minute):
    the heartbeat sees it, the run stops asking with one line saying so, and neither the
    status nor the counts of the session are written by it (before: it went on, then marked
    the other run's session `failed` with "no conversation")."""
    from kontest_tui.errors import LeaseLostError
    from kontest_tui.run import session as session_module
    from kontest_tui.store import leases

    monkeypatch.setattr(session_module, "RENEW_EVERY_S", 0.05)
    relations = make_relations(30)
    conversations = make_conversations(relations)
    model = ToyModel(delay=0.02)
    with Store(tmp_path / "l.db") as store:
        session = store_session(store, relations, conversations)
        run = asyncio.create_task(run_session(store, session, model))
        while len(model.calls) < 10:
            await asyncio.sleep(0.01)
        with Store(tmp_path / "l.db") as other, other.transaction() as conn:
            leases.acquire(conn, session, stale_after=-1.0)  # the other process takes over
            conn.execute("UPDATE sessions SET message = 'the other run' WHERE id = ?", (session,))
        with pytest.raises(LeaseLostError, match=f"session {session} was taken over by another"):
            await run
        asked = len(model.calls)
        await asyncio.sleep(0.2)
        assert len(model.calls) == asked  # it stopped asking
        assert asked < 180
        row = store.sessions.get(session)
        assert row["status"] == "running" and row["message"] == "the other run"
        holders = store.conn.execute("SELECT pid FROM session_leases").fetchall()
        assert holders == [(os.getpid(),)]  # the other owner's lease is still there
