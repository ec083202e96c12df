"""Run safety: cancelling or quitting a running session asks first; Resume asks the rest."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable

from kontest_tui.store import Store
from kontest_tui.tui.app import make_app
from kontest_tui.tui.screens.confirm import ConfirmScreen
from kontest_tui.tui.screens.live_run import LiveRunScreen
from kontest_tui.tui.screens.results import ResultsScreen
from kontest_tui.tui.screens.start import StartScreen
from kontest_tui.tui.screens.wizard import WizardScreen
from tests.support.tui import settle, top_screen, wait_for_screen, wait_until, write_sample_part


async def test_cancel_asks_then_resume_asks_only_the_rest(tmp_path: Path, db_path: str) -> None:
    # Denmark (34 relations, 204 turns): ~50 ms an answer, 4 at a time, ~2.5 s in all
    kg = write_sample_part(tmp_path, "denmark")
    app = make_app(kg=str(kg), model="sim:slow", db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, WizardScreen)
        await pilot.press("ctrl+r")
        run = await wait_for_screen(pilot, LiveRunScreen)
        await wait_until(pilot, lambda: run.tally.snapshot().answered >= 2, what="first answers")
        await pilot.press("p")  # paused: the run stays unfinished while the test looks
        await pilot.press("escape")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("n")  # keep running
        await wait_for_screen(pilot, LiveRunScreen)
        assert run.running
        await pilot.press("ctrl+q")  # quitting asks too
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("escape")
        await wait_for_screen(pilot, LiveRunScreen)
        assert run.running and app.is_running
        await pilot.press("escape")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_until(pilot, lambda: run.finished, what="the cancelled run")
        session_id = run.session_id
        assert session_id and run.tally.snapshot().answered < 204
        await pilot.press("escape", "escape")
        start = await wait_for_screen(pilot, StartScreen)
        table = start.query_one("#sessions", DataTable)
        await wait_until(pilot, lambda: table.row_count == 1, what="the refreshed list")
        assert table.get_row_at(0)[4] == "cancelled"
        await pilot.press("u")
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, ResultsScreen) and app.screen.ready,
            what="the resumed run's results",
        )
        assert top_screen(app, ResultsScreen).session_id == session_id
        # Let the live screen's removal finish before the pilot closes the app: its Header's
        # title callback, still queued, failed with NoMatches at teardown now and then.
        await settle(pilot)
        with Store(db_path) as store:
            assert len(store.responses.load(session_id)) == 204  # 34 relations x 6 calls
            assert store.sessions.get(session_id)["status"] == "done"


async def test_bad_model_spec_stops_before_the_run_and_keys_move_between_steps(
    db_path: str,
) -> None:
    from textual.widgets import Input, OptionList, TabbedContent

    app = make_app(db=db_path)
    async with app.run_test(size=(100, 32)) as pilot:
        await wait_for_screen(pilot, StartScreen)
        await pilot.press("n")
        wizard = await wait_for_screen(pilot, WizardScreen)
        await wait_until(pilot, lambda: wizard.kg is not None, what="the graph")
        # The search field is focused first; Down enters the suggestions.
        field = wizard.query_one("#entity-input", Input)
        assert app.focused is field
        await pilot.press(*"Ulster")
        suggestions = wizard.query_one("#entity-suggestions", OptionList)
        await wait_until(pilot, lambda: suggestions.option_count > 0, what="suggestions")
        await pilot.press("down")
        await wait_until(
            pilot,
            lambda: app.focused is suggestions and suggestions.highlighted == 0,
            what="the first suggestion highlighted",
        )
        # ctrl+pagedown from a field goes to the next step.
        field.focus()
        await wait_until(pilot, lambda: app.focused is field, what="the field focused")
        await pilot.press("ctrl+pagedown")
        tabs = wizard.query_one("#wizard-tabs", TabbedContent)
        await wait_until(pilot, lambda: tabs.active == "step-templates", what="the next step")
        await pilot.press("ctrl+pageup")
        await wait_until(pilot, lambda: tabs.active == "step-graph", what="the step before")
        tabs.active = "step-model"
        wizard.query_one("#model-spec", Input).value = "ssim:s"
        await pilot.press("ctrl+r")
        status = wizard.query_one("#model-status")
        await wait_until(
            pilot,
            lambda: "unknown model kind 'ssim'" in str(status.render()),
            what="the model error",
        )
        assert isinstance(app.screen, WizardScreen)
