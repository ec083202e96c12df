"""Snapshots of each main screen at 100x32 (textual pinned to 8.2.8; update with
`make snapshots-update` after reviewing the report)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import DataTable, TabbedContent

from kontest_tui.run.api import SessionSpec
from kontest_tui.tui.app import KontestApp, make_app
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.start import StartScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from kontest_tui.tui.widgets.ticks import TickList
from tests.support.tui import (
    TEN_RELATIONS,
    settle,
    wait_for_screen,
    wait_for_workers,
    wait_until,
    widget_text,
)

SIZE = (100, 32)


async def open_wizard(pilot: Pilot, step: str) -> WizardScreen:
    wizard = await wait_for_screen(pilot, WizardScreen)
    await wait_until(pilot, lambda: wizard.state.run_state()[0], what="Run on")
    await wait_for_workers(pilot)
    wizard.query_one("#wizard-tabs", TabbedContent).active = step
    await settle(pilot)
    return wizard


async def open_results(pilot: Pilot) -> ResultsScreen:
    await open_wizard(pilot, "step-model")
    await pilot.press("ctrl+r")
    results = await wait_for_screen(pilot, ResultsScreen)
    await settle(pilot)
    return results


def test_start_screen(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        start = await wait_for_screen(pilot, StartScreen)
        await settle(pilot)
        assert start.query_one("#sessions", DataTable).row_count == 0

    assert snap_compare(make_app(db=db_path), terminal_size=SIZE, run_before=run_before)


def test_wizard_graph_step(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_wizard(pilot, "step-graph")

    assert snap_compare(
        make_app(kg="places", model="sim", db=db_path), terminal_size=SIZE, run_before=run_before
    )


def test_wizard_templates_step(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_wizard(pilot, "step-templates")

    assert snap_compare(
        make_app(kg="places", model="sim", db=db_path), terminal_size=SIZE, run_before=run_before
    )


def test_wizard_model_step(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_wizard(pilot, "step-model")

    assert snap_compare(
        make_app(kg="places", model="sim", db=db_path), terminal_size=SIZE, run_before=run_before
    )


def test_live_run_paused_before_the_first_answer(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        wizard = await open_wizard(pilot, "step-model")
        await wizard.app.workers.wait_for_complete()
        app = pilot.app
        assert isinstance(app, KontestApp)
        original = app.start_run

        def start_paused(spec: SessionSpec, compare_with: str | None = None) -> None:
            screen = LiveRunScreen(spec)
            screen.control.pause()
            app.push_screen(screen)

        app.start_run = start_paused  # type: ignore[method-assign]
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.control.executor is not None, what="the executor")
        state = run.query_one("#run-state")
        await wait_until(pilot, lambda: widget_text(state).startswith("paused"), what="paused")
        assert run.tally.snapshot().answered == 0
        app.start_run = original  # type: ignore[method-assign]

    assert snap_compare(
        make_app(kg="places", model="sim", db=db_path), terminal_size=SIZE, run_before=run_before
    )


def test_results_graph(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_results(pilot)
        await pilot.press("down", "down")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SIZE,
        run_before=run_before,
    )


def test_results_gap(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_results(pilot)
        await pilot.press("g")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SIZE,
        run_before=run_before,
    )


def test_results_errors(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_results(pilot)
        await pilot.press("x")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SIZE,
        run_before=run_before,
    )


def test_help_screen(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await wait_for_screen(pilot, StartScreen)
        await wait_for_workers(pilot)
        await pilot.press("f1")
        await settle(pilot)

    assert snap_compare(make_app(db=db_path), terminal_size=SIZE, run_before=run_before)


def test_start_screen_at_80x24(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await wait_for_screen(pilot, StartScreen)
        await settle(pilot)

    assert snap_compare(make_app(db=db_path), terminal_size=(80, 24), run_before=run_before)


def test_wizard_kinds_step(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        wizard = await open_wizard(pilot, "step-kinds")
        wizard.query_one("#kind-select", TickList).select("factcheck")
        wizard.query_one("#kind-select", TickList).select("logic")
        await wait_until(
            pilot,
            lambda: wizard.preparation is not None and len(wizard.preparation.counts) == 3,
            what="the counts",
        )
        await settle(pilot)

    assert snap_compare(
        make_app(kg="places", model="sim", db=db_path), terminal_size=SIZE, run_before=run_before
    )
