"""Snapshots of the loop's screens at 80x24, the smallest terminal the explorer supports:
results (graph, gap list), the template editor editing t1 and the synonym editor.
Update with `make snapshots-update` after reviewing the report."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Select

from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.curation import SynonymEditorScreen, TemplateEditorScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import TEN_RELATIONS, settle, wait_for_screen, wait_for_workers, wait_until

SMALL = (80, 24)


async def run_ten(pilot: Pilot) -> ResultsScreen:
    wizard = await wait_for_screen(pilot, WizardScreen)
    await wait_until(pilot, lambda: wizard.state.run_state()[0], what="Run on")
    await wait_for_workers(pilot)
    await pilot.press("ctrl+r")
    results = await wait_for_screen(pilot, ResultsScreen)
    await wait_until(pilot, lambda: results.ready, what="the results")
    await wait_for_workers(pilot)
    return results


def test_results_graph_at_80x24(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await run_ten(pilot)
        await pilot.press("n")  # the first node with errors, its verdicts first
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SMALL,
        run_before=run_before,
    )


def test_results_gap_at_80x24(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await run_ten(pilot)
        await pilot.press("g")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SMALL,
        run_before=run_before,
    )


def test_template_editor_editing_t1_at_80x24(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await run_ten(pilot)
        await pilot.press("e")
        editor = await wait_for_screen(pilot, TemplateEditorScreen)  # its set read
        editor.query_one("#template-choice", Select).value = "t1"
        await wait_until(pilot, lambda: editor.form.words_shown == ["Does", "contain"], what="t1")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SMALL,
        run_before=run_before,
    )


def test_synonym_editor_at_80x24(snap_compare, db_path: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await run_ten(pilot)
        await pilot.press("e")
        await wait_for_screen(pilot, TemplateEditorScreen)
        await pilot.press("ctrl+y")
        editor = await wait_for_screen(pilot, SynonymEditorScreen)  # its session read
        await wait_until(pilot, lambda: editor.array_size is not None, what="the array size")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=TEN_RELATIONS, model="sim", db=db_path),
        terminal_size=SMALL,
        run_before=run_before,
    )


def test_results_first_error_at_120x36(snap_compare, db_path: str, tmp_path) -> None:  # noqa: ANN001
    """The paper's Kinawley example (3 relations): `n` from the top selects its error."""
    from tests.support.tui import write_kinawley

    kg_path, _ = write_kinawley(tmp_path)

    async def run_before(pilot: Pilot) -> None:
        results = await run_ten(pilot)
        await pilot.press("n")
        await wait_until(pilot, lambda: results.error_index == 0, what="the first error")
        await settle(pilot)

    assert snap_compare(
        make_app(kg=str(kg_path), model="sim", db=db_path),
        terminal_size=(120, 36),
        run_before=run_before,
    )


def test_probe_panel_at_80x24(snap_compare, db_path: str) -> None:
    import asyncio

    from kontest_tui.tui.screens.probe import ProbeScreen
    from tests.support.sessions import store_sessions

    async def run_before(pilot: Pilot) -> None:
        (session_id,) = await asyncio.to_thread(store_sessions, db_path, [("sim", 10)])
        pilot.app.push_screen(
            ProbeScreen(db_path, session_id, "luxembourg>luxembourg.canton-of-capellen")
        )
        screen = await wait_for_screen(pilot, ProbeScreen)
        await wait_until(pilot, lambda: screen.ready, what="the rows")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: len(screen.probe_ids) == 3, what="the answers shown")
        await settle(pilot)

    assert snap_compare(make_app(db=db_path), terminal_size=SMALL, run_before=run_before)


def test_live_run_finished_at_80x24(snap_compare, tmp_path, db_path: str) -> None:
    """The live screen of a finished 3-relation run (18 answers, the simulated model): every
    pane's text wraps at 80 columns (nothing clipped, the parsed answer first), the footer
    offers only what is left to do (Results, Back: no Pause or Cancel), the ETA is gone."""
    from kontest_tui.run.api import SessionSpec
    from kontest_tui.run.executor import ExecutorConfig
    from kontest_tui.tui.screens.live_run import LiveRunScreen
    from tests.support.tui import settle, write_kinawley

    kg_path, _ = write_kinawley(tmp_path)
    # one call at a time: the answers arrive (and are listed) in the same order every time
    one = ExecutorConfig(concurrency=1)
    spec = SessionSpec(str(kg_path), kg_name="kinawley", model="sim", config=one)

    async def run_before(pilot: Pilot) -> None:
        await wait_for_workers(pilot)
        run = LiveRunScreen(spec, auto_results=False)
        await pilot.app.push_screen(run)
        await wait_until(pilot, lambda: run.finished, what="the run")
        await settle(pilot)

    assert snap_compare(make_app(db=db_path), terminal_size=SMALL, run_before=run_before)
