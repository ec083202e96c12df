"""The live screen's state line when the run does not go smoothly: a model that stops
answering pauses the run with a notification, a pause stops the rate and the time left, a
resume counts the answers stored before it apart from this run's, and a resume that
withholds the API key from the stored URL says so."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from kontest_tui.kg.io import load_graph
from kontest_tui.run.api import ExecutorConfig, SessionSpec, create_session
from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen, render_live_counts
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.models.model_test_servers import start_sim_server
from tests.support.tui import (
    cancel_run,
    notifications,
    notified,
    wait_for_screen,
    wait_until,
    widget_text,
)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed): connection refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def said(app) -> int:  # noqa: ANN001
    """How many times the explorer said that the model stopped answering."""
    return sum("The model stopped answering" in str(n.message) for n in notifications(app))


def state_line(run: LiveRunScreen) -> str:
    return widget_text(run.query_one("#run-state"))


async def test_a_model_that_stops_answering_pauses_the_run(db_path: str) -> None:
    """The model's server dies mid-run (QA: the failed count climbed silently): after
    `failing_after` turns in a row without an answer the run pauses, a notification names the
    error, the state line says why; p asks again (still gone: said again); escape cancels
    with the answers received before the server died stored."""
    app = make_app(kg="places", model="sim", db=db_path)
    server, url = start_sim_server("--profile", "slow")
    try:
        async with app.run_test(size=(100, 32)) as pilot:
            await wait_for_screen(pilot, WizardScreen)

            def start_served(spec: SessionSpec, compare_with: str | None = None) -> None:
                served = replace(
                    spec,
                    model=f"ollama:slow@{url}",
                    config=ExecutorConfig(concurrency=1, max_attempts=1, failing_after=3),
                )
                app.push_screen(LiveRunScreen(served, compare_with=compare_with))

            app.start_run = start_served  # type: ignore[method-assign]
            await pilot.press("ctrl+r")
            run = await wait_for_screen(pilot, LiveRunScreen)
            await wait_until(pilot, lambda: run.tally.snapshot().answered >= 2, what="answers")
            server.kill()
            server.wait()
            await wait_until(pilot, lambda: run.failing is not None, what="the failing event")
            assert run.failing is not None
            assert run.control.paused and run.failing[0] == 3 and not run.finished
            assert notified(app, "The model stopped answering: 3 turns in a row failed")
            assert notified(app, "cannot reach ollama")
            await wait_until(pilot, lambda: "not answering" in state_line(run), what="state")
            assert state_line(run).startswith("paused, the model not answering: ")
            await pilot.press("p")  # asks again: the server is still gone, said again
            await wait_until(pilot, lambda: said(app) == 2, what="the second event")
            assert run.control.paused and run.failing is not None
            await cancel_run(pilot, run)
            await wait_until(pilot, lambda: run.end is not None, what="the cancelled run's end")
            assert run.end is not None and run.end.status == "cancelled"
            assert run.session_id is not None
            with Store(db_path) as store:
                assert store.sessions.refresh_counts(run.session_id)["answered"] >= 2
    finally:
        server.kill()
        server.wait()


async def test_a_pause_stops_the_rate_and_the_time_left(db_path: str) -> None:
    """While paused the asking time stands still (the rate and time left were computed over
    the time since the start: the ETA grew and the rate fell while paused)."""
    app = make_app(kg="places", model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.control.executor is not None, what="executor")
        await pilot.press("p")
        assert run.control.paused
        asked = run.active_s
        redraws = run.redraws
        await wait_until(pilot, lambda: run.redraws >= redraws + 5, what="5 redraws")
        assert run.active_s == asked
        line = state_line(run)
        assert line.startswith("paused:") and "answers/s" not in line and " left" not in line
        await pilot.press("p")
        await wait_until(pilot, lambda: run.active_s > asked, what="asking time again")
        await cancel_run(pilot, run)
        await wait_until(pilot, lambda: run.end is not None, what="the cancelled run's end")


def test_a_resumes_counts_name_the_answers_stored_before() -> None:
    """The tally counts this run's answers; the progress line counts all stored ones: the
    counts line names the earlier ones so that the two do not seem to disagree."""
    from kontest_tui.run.api import LiveTally

    tally = LiveTally(6)
    assert render_live_counts(tally.snapshot(), before=1260).plain == (
        "No answers yet in this run (1260 stored before)."
    )
    assert render_live_counts(tally.snapshot()).plain == "No answers yet."


async def test_a_resume_shows_all_answers_and_names_the_earlier_ones(db_path: str) -> None:
    """A run cancelled after some answers, resumed in the explorer (QA: "1260/14964 answers"
    beside "answers 386"): the progress line counts every stored answer of the session, the
    counts line names those stored before this run."""
    app = make_app(kg="places", model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        first = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: first.tally.snapshot().answered >= 3, what="answers")
        await cancel_run(pilot, first)
        await wait_until(pilot, lambda: first.end is not None, what="the cancelled run's end")
        assert first.end is not None and first.end.status == "cancelled"
        assert first.session_id is not None
        with Store(db_path) as store:
            row = store.sessions.get(first.session_id)
            stored, planned = (
                store.sessions.refresh_counts(first.session_id)["answered"],
                row["planned"],
            )
        assert 0 < stored < planned
        run = LiveRunScreen(resume=first.session_id, auto_results=False)
        run.control.pause()  # before its first question
        await app.push_screen(run)
        await wait_until(pilot, lambda: run.progress() is not None, what="the resume's progress")
        await wait_until(
            pilot, lambda: state_line(run).startswith(f"paused: {stored}/{planned} answers")
        )
        counts = widget_text(run.query_one("#run-counts"))
        assert counts == f"No answers yet in this run ({stored} stored before)."
        await pilot.press("p")
        await wait_until(pilot, lambda: run.tally.snapshot().answered >= 2, what="answers")
        await wait_until(pilot, lambda: run.shown_counts[0] >= 2, what="the counts redrawn")
        counts = widget_text(run.query_one("#run-counts"))
        assert counts.startswith(f"this run ({stored} answers stored before): relations judged")
        await pilot.press("p")  # the counts stand still (but for answers in flight)

        def all_counted() -> bool:
            line = f"paused: {stored + run.tally.snapshot().answered}/{planned} answers"
            return state_line(run).startswith(line)

        await wait_until(pilot, all_counted, what="this run's and the earlier answers counted")
        await cancel_run(pilot, run)
        await wait_until(pilot, lambda: run.end is not None, what="the cancelled resume's end")


async def test_a_resume_says_when_the_api_key_is_withheld(
    db_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored URL's host is not the key's (OPENAI_BASE_URL unset: api.openai.com):
    the engine does not send OPENAI_API_KEY there, and the explorer says so before asking."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    spec = f"openai:gpt-test@http://127.0.0.1:{closed_port()}/v1"
    with Store(db_path) as store:
        session_id = create_session(store, SessionSpec(load_graph("places"), model=spec, limit=1))
    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        run = LiveRunScreen(resume=session_id, auto_results=False)
        await app.push_screen(run)
        await wait_until(pilot, lambda: notified(app, "is not sent to"), what="the note")
        assert notified(app, "OPENAI_API_KEY is not sent to 127.0.0.1")
        await wait_until(pilot, lambda: run.finished or run.control.executor is not None)
        if not run.finished:
            await cancel_run(pilot, run)
            await wait_until(pilot, lambda: run.finished, what="the run's end")
