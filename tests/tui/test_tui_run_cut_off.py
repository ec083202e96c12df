"""A run the explorer could not wind down before its process ended (closed while the session
was being stored, asked or evaluated) leaves its session cancelled, not `running` (it showed
`running 0/91320` until resumed)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable

from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import SessionSpec, create_session, mark_interrupted
from kontest_tui.store import Store
from kontest_tui.store.view_records import SessionSummary
from kontest_tui.tui.app import end_process_after, make_app
from kontest_tui.tui.run_control import RunControl, leave_cancelled
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.start import StartScreen, rate_cell
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import cancel_run, wait_for_screen, wait_until


def stored(db: Path, status: str) -> str:
    with Store(db) as store:
        session_id = create_session(store, SessionSpec(load_graph("places"), limit=2))
        store.sessions.update(session_id, status=status)
    return session_id


def status(db: Path, session_id: str) -> tuple[str, str | None]:
    with Store(db) as store:
        row = store.sessions.get(session_id)
        return row["status"], row["message"]


def test_only_running_or_paused_sessions_are_marked(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    cases = {name: stored(db, name) for name in ("running", "paused", "done", "created")}
    with Store(db) as store:
        marked = {name: mark_interrupted(store, id_, "cut") for name, id_ in cases.items()}
    assert marked == {"running": True, "paused": True, "done": False, "created": False}
    assert status(db, cases["running"]) == ("cancelled", "cut")
    assert status(db, cases["done"])[0] == "done"


def test_the_process_end_marks_the_runs_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exit timer: sessions of runs aborted and still going are marked cancelled before
    the process ends; a run that ended by itself, or was never aborted, is left alone."""
    db = tmp_path / "s.db"
    cut, ended, kept = stored(db, "running"), stored(db, "running"), stored(db, "running")
    controls = []
    for session_id in (cut, ended, kept):
        control = RunControl()
        control.session_id = session_id
        controls.append(control)
    controls[0].abort()
    controls[1].abort()
    controls[1].detach()  # it wound down in time (its own status is its business)
    exits: list[int] = []
    exited = threading.Event()

    def fake_exit(code: int) -> None:
        exits.append(code)
        exited.set()

    monkeypatch.setattr(os, "_exit", fake_exit)
    end_process_after(0.01, 3, before=lambda: leave_cancelled(controls, db))
    assert exited.wait(30)
    assert exits == [3]
    assert status(db, cut) == ("cancelled", "interrupted: the explorer closed")
    assert status(db, ended)[0] == "running" and status(db, kept)[0] == "running"


def test_the_process_ends_even_if_marking_fails_or_hangs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Marking may fail (the database gone) or wait (its lock held by the run's thread, a
    10 s busy timeout): the process ends anyway, BEFORE_EXIT_S after the grace."""
    exited = threading.Event()
    monkeypatch.setattr(os, "_exit", lambda code: exited.set())

    def broken() -> None:
        raise RuntimeError("the database is gone")

    end_process_after(0.01, 0, before=broken)
    assert exited.wait(30)
    exited.clear()
    never = threading.Event()

    def wait_for_the_test_end() -> None:
        never.wait()

    end_process_after(0.01, 0, before=wait_for_the_test_end)
    assert exited.wait(30)
    never.set()


def summary(status: str, rate: float | None, measure: str = "") -> SessionSummary:
    return SessionSummary(
        "s", "sim", "places", "", status, rate if not measure else None, (), 0, measure, rate
    )


def test_a_rate_of_a_session_not_done_says_so_far() -> None:
    assert rate_cell(summary("done", 0.097)) == "9.7%"
    assert rate_cell(summary("cancelled", 0.097)) == "9.7% so far"
    assert rate_cell(summary("cancelled", None)) == "-"  # never evaluated (ctrl-c, a kill)
    assert rate_cell(summary("failed", 0.25, "logic")) == "25.0% hallucination rate so far"
    assert rate_cell(summary("done", 0.25, "logic")) == "25.0% hallucination rate"


async def test_a_run_cancelled_in_the_explorer_lists_its_rate_so_far(db_path: str) -> None:
    """A session cancelled in the explorer is evaluated on the answers it got and its rate
    says `so far` on the start screen (it showed a bare 9.7% where the docs said `-`)."""
    app = make_app(kg="places", model="sim:slow", db=db_path)
    async with app.run_test(size=(120, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.tally.snapshot().answered >= 30, what="answers")
        await cancel_run(pilot, run)
        await wait_until(pilot, lambda: run.end is not None, what="the cancelled run's end")
        assert run.end is not None
        with Store(db_path) as store:
            row = store.sessions.get(run.end.session_id)
        assert row["status"] == "cancelled" and row["oracle_error_rate"] is not None
        app.pop_screen()  # the wizard
        app.pop_screen()  # the start screen
        start = await wait_for_screen(pilot, StartScreen)
        await wait_until(pilot, lambda: start.query_one("#sessions", DataTable).row_count == 1)
        cells = start.query_one("#sessions", DataTable).get_row_at(0)
        assert cells[4] == "cancelled"
        assert cells[5] == f"{row['oracle_error_rate'] * 100:.1f}% so far"
